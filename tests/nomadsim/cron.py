"""Next launch of a periodic job: 5-field cron (plus @hourly-style names).

Enough for NextPeriodicLaunch and virtual-clock launches; Nomad's cronexpr
also accepts seconds and years fields, which this does not.
"""

import datetime

_ALIASES = {"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *",
            "@monthly": "0 0 1 * *", "@weekly": "0 0 * * 0",
            "@daily": "0 0 * * *", "@midnight": "0 0 * * *",
            "@hourly": "0 * * * *"}
_RANGES = ((0, 59), (0, 23), (1, 31), (1, 12), (0, 6))
_NAMES = {3: ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep",
              "oct", "nov", "dec"],
          4: ["sun", "mon", "tue", "wed", "thu", "fri", "sat"]}


def _field(text, pos):
    lo, hi = _RANGES[pos]
    out = set()
    for part in text.lower().split(","):
        step = 1
        if "/" in part:
            part, s = part.split("/", 1)
            step = int(s)
        if part in ("*", "?"):
            a, b = lo, hi
        elif "-" in part:
            a, b = (_num(x, pos) for x in part.split("-", 1))
        else:
            a = _num(part, pos)
            b = hi if step > 1 else a
        out.update(range(a, b + 1, step))
    if pos == 4 and 7 in out:
        out.add(0)
    return out


def _num(x, pos):
    names = _NAMES.get(pos)
    if names and x in names:
        return names.index(x) + (1 if pos == 3 else 0)
    return int(x)


def parse(spec):
    spec = _ALIASES.get(spec.strip(), spec.strip())
    fields = spec.split()
    if len(fields) == 6:
        fields = fields[1:]   # drop a leading seconds field
    if len(fields) != 5:
        raise ValueError("invalid cron spec %r" % spec)
    return [_field(f, i) for i, f in enumerate(fields)]


def next_after(spec, after_ns):
    mins, hours, days, months, dows = parse(spec)
    t = datetime.datetime.fromtimestamp(after_ns // 1_000_000_000,
                                        datetime.timezone.utc)
    t = t.replace(second=0) + datetime.timedelta(minutes=1)
    for _ in range(0, 366 * 24 * 60 * 2):
        if (t.month in months and t.day in days
                and (t.weekday() + 1) % 7 in dows and t.hour in hours
                and t.minute in mins):
            return int(t.timestamp()) * 1_000_000_000
        t += datetime.timedelta(minutes=1)
    return None


def next_launch(periodic, now_ns):
    specs = periodic.get("Specs") or ([periodic["Spec"]] if periodic.get("Spec") else [])
    best = None
    for s in specs:
        try:
            n = next_after(s, now_ns)
        except ValueError:
            continue
        if n is not None and (best is None or n < best):
            best = n
    return best
