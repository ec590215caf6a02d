// The dashboard in Debian's Chromium, driven by playwright-core: an
// approver logs in, sees the deployment waiting, approves it, watches it
// complete (the test moves the simulator's clock), logs out; a reader sees
// no button and a forged form of hers is refused.  Prints "ok - NAME" or
// "not ok - NAME" per step; a failed step leaves a screenshot in SHOTS.
//
// Run by tests/browser/run.py, which starts the daemon and passes:
// NOPS_URL, NOPS_SIM, NOPS_APPROVE (deployment id), NOPS_FORGE (another
// waiting deployment), NOPS_USERS (JSON {name: password}), SHOTS.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const { chromium } = require('playwright-core');

const base = process.env.NOPS_URL;
const sim = process.env.NOPS_SIM;
const approveId = process.env.NOPS_APPROVE;
const forgeId = process.env.NOPS_FORGE;
const users = JSON.parse(process.env.NOPS_USERS);
const shots = process.env.SHOTS || os.tmpdir();
let failures = 0;

function ok(name, cond, detail) {
  if (cond) {
    console.log('ok - ' + name);
  } else {
    failures++;
    console.log('not ok - ' + name);
    if (detail !== undefined)
      String(detail).split('\n').slice(0, 10).forEach(
        (l) => console.log('# ' + l));
  }
  return cond;
}

async function shot(page, name) {
  try {
    fs.mkdirSync(shots, { recursive: true });
    const f = path.join(shots, name.replace(/[^a-z0-9]+/gi, '_') + '.png');
    await page.screenshot({ path: f, fullPage: true });
    console.log('# screenshot ' + f);
  } catch (e) {
    console.log('# no screenshot: ' + e.message);
  }
}

// One step: its name, a function returning [cond, detail].
async function step(page, name, fn) {
  let r;
  try {
    r = await fn();
  } catch (e) {
    r = [false, e.message];
  }
  if (!ok(name, r[0], r[1]))
    await shot(page, name);
  return r[0];
}

async function browser() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nops-chromium-'));
  const ctx = await chromium.launchPersistentContext(dir, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu',
      '--disable-background-networking', '--disable-component-update',
      '--disable-sync'],
  });
  ctx.setDefaultTimeout(15000);
  return { ctx, dir };
}

async function close(b) {
  await b.ctx.close();
  fs.rmSync(b.dir, { recursive: true, force: true });
}

async function login(page, who) {
  await page.goto(base + '/');
  await page.waitForURL(/\/login/);
  await page.fill('#username', who);
  await page.fill('#password', users[who]);
  await Promise.all([page.waitForNavigation(), page.click('button[type=submit]')]);
}

async function advance(seconds) {
  await fetch(sim + '/_sim/clock', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ Advance: seconds }),
  });
}

async function simPost(p, body) {
  const r = await fetch(sim + p, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return r.status;
}

// The numbers of the health table's row for a group, or null.
async function healthRow(page, group) {
  return page.evaluate((g) => {
    const tr = document.querySelector('#health-groups tr[data-group="' +
      g + '"]');
    if (!tr) return null;
    const n = (c) => parseInt(tr.querySelector('td.' + c).textContent, 10);
    return { healthy: n('healthy'), unhealthy: n('unhealthy'),
      placed: parseInt(tr.children[2].textContent, 10) };
  }, group);
}

async function approver() {
  const b = await browser();
  const page = b.ctx.pages()[0] || await b.ctx.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });

  await step(page, 'browser: the dashboard asks to log in first', async () => {
    await page.goto(base + '/');
    return [page.url().includes('/login'), page.url()];
  });
  await step(page, 'browser: the approver logs in', async () => {
    await login(page, 'alice');
    const who = await page.textContent('.who .user');
    return [who === 'alice' && !page.url().includes('/login'), who];
  });
  await step(page, 'browser: the overview shows the deployment awaiting approval',
    async () => {
      const t = await page.textContent('#awaiting_approval');
      return [t.includes('#' + approveId), t];
    });
  await step(page, 'browser: its page shows what approve will do', async () => {
    await Promise.all([page.waitForNavigation(),
      page.click('#awaiting_approval a[href="/deployments/' + approveId + '"]')]);
    const plan = await page.textContent('#plan');
    return [plan.includes('Plan job') && await page.isVisible('#approve'), plan];
  });
  await step(page, 'browser: the git context is shown next to the plan diff',
    async () => {
      const git = await page.evaluate(async (id) => {
        const r = await fetch('/api/v1/deployments/' + id,
          { credentials: 'same-origin' });
        return (await r.json()).git;
      }, approveId);
      const shown = await page.evaluate(() => {
        const s = document.querySelector('#git');
        const next = s && s.nextElementSibling;
        return s === null ? null : {
          subject: s.querySelector('.subject').textContent,
          author: (s.querySelector('.author') || {}).textContent,
          summary: s.querySelector('#git-summary').textContent,
          next: next ? next.textContent : '' };
      });
      return [shown !== null && git.subject !== '' &&
        shown.subject === git.subject && shown.author === git.author &&
        shown.summary === git.summary && shown.next.startsWith('Diff'),
        JSON.stringify({ git, shown })];
    });
  await step(page, 'browser: the controls are drawn from the actions list ' +
    'alone', async () => {
    // The same session reads the deployment's actions from the API.
    const acts = await page.evaluate(async (id) => {
      const r = await fetch('/api/v1/deployments/' + id,
        { credentials: 'same-origin' });
      return (await r.json()).actions;
    }, approveId);
    const drawn = await page.evaluate(() => {
      const out = { on: [], off: [] };
      document.querySelectorAll('#actions form button[type=submit]')
        .forEach((b) => out.on.push(b.id));
      document.querySelectorAll('#actions button[disabled]')
        .forEach((b) => out.off.push(b.id.replace(/^off-/, '')));
      return out;
    });
    const on = acts.filter((a) => a.enabled).map((a) => a.id);
    const off = acts.filter((a) => !a.enabled).map((a) => a.id);
    return [JSON.stringify(on) === JSON.stringify(drawn.on) &&
      JSON.stringify(off) === JSON.stringify(drawn.off) && on.length > 0,
      JSON.stringify({ acts: acts.map((a) => a.id), drawn })];
  });
  await step(page, 'browser: approve', async () => {
    // Nomad keeps the new allocations unhealthy until the test says.
    await simPost('/_sim/health/hold', { JobID: 'web' });
    await Promise.all([page.waitForNavigation(), page.click('#approve')]);
    const msg = await page.textContent('#main #notice');
    return [msg.includes('Approved'), msg];
  });
  await step(page, 'browser: the notice is inside the page, never text from '
    + 'the URL', async () => {
    const html = await page.content();
    const p2 = await b.ctx.newPage();
    await p2.goto(base + '/deployments/' + approveId +
      '?done=%3Cb%3Eowned%3C%2Fb%3E');
    const echoed = (await p2.content()).includes('owned');
    const notice = await p2.$('#notice');
    await p2.close();
    return [html.trimStart().startsWith('<!DOCTYPE html>') &&
      !echoed && notice === null, 'echoed=' + echoed];
  });
  await step(page, 'browser: the health progress appears while it waits',
    async () => {
      const end = Date.now() + 40000;
      let row = null;
      while (Date.now() < end) {
        await advance(20);
        await page.waitForTimeout(1000);
        row = await healthRow(page, 'app');
        if (row && row.placed >= 1)
          break;
      }
      const allocs = await page.$$('#health-allocs tr');
      return [row !== null && row.placed >= 1 && row.healthy === 0 &&
        allocs.length > 1, JSON.stringify(row)];
    });
  await step(page, 'browser: the health progress updates in place',
    async () => {
      await simPost('/_sim/health/hold', { JobID: 'web', Hold: false });
      const before = await page.getAttribute('body', 'data-refreshed');
      const end = Date.now() + 40000;
      let row = null;
      let state = '';
      while (Date.now() < end) {
        await advance(20);
        await page.waitForTimeout(1000);
        row = await healthRow(page, 'app');
        state = await page.getAttribute('h1 .state', 'data-state');
        if ((row && row.healthy > 0) || state === 'completed')
          break;
      }
      const after = await page.getAttribute('body', 'data-refreshed');
      return [((row && row.healthy > 0) || state === 'completed') &&
        after !== before, JSON.stringify(row) + ' ' + state];
    });
  await step(page, 'browser: the page refreshes by itself until it completes',
    async () => {
      const end = Date.now() + 60000;
      let state = '';
      while (Date.now() < end) {
        await advance(30);
        await page.waitForTimeout(1000);
        state = await page.getAttribute('h1 .state', 'data-state');
        if (state === 'completed' || state === 'failed')
          break;
      }
      // The script replaced <main> without a reload.
      const refreshed = await page.getAttribute('body', 'data-refreshed');
      return [state === 'completed' && refreshed !== null, state];
    });
  await step(page, 'browser: no approve button once it is done', async () => {
    return [!(await page.isVisible('#approve')), ''];
  });
  await step(page, 'browser: states read as words, times as "ago" with the '
    + 'absolute time on hover', async () => {
      const label = await page.textContent('h1 .state');
      const t = await page.$('#details time');
      const title = t ? await t.getAttribute('title') : '';
      const text = t ? await t.textContent() : '';
      return [label === 'completed' && /UTC$/.test(title) &&
        /ago|just now/.test(text), label + ' | ' + title + ' | ' + text];
    });
  await step(page, 'browser: the deployments and activity pages refresh',
    async () => {
      await page.goto(base + '/deployments');
      const d = await page.getAttribute('body', 'data-refresh');
      await page.goto(base + '/activity');
      const a = await page.getAttribute('body', 'data-refresh');
      return [parseInt(d, 10) > 0 && parseInt(a, 10) > 0, d + ' ' + a];
    });
  await step(page, 'browser: no Retry button where retry is not allowed',
    async () => {
      await page.goto(base + '/deployments/' + approveId);
      return [!(await page.isVisible('#retry')) &&
        !(await page.isVisible('#acknowledge')), ''];
    });
  await step(page, 'browser: an operation runs from the form its schema '
    + 'draws, and its output is shown', async () => {
      await page.goto(base + '/jobs/default/web');
      await page.fill('form[data-group="greet"] input[name="in.name"]',
        'from-chromium');
      // Nomad's clock moves while the run waits for its allocation.
      const tick = setInterval(() => { advance(1); }, 200);
      try {
        await Promise.all([page.waitForNavigation({ timeout: 60000 }),
          page.click('button[id="web.greet"]')]);
      } finally {
        clearInterval(tick);
      }
      const code = await page.textContent('#exit-code');
      const out = await page.textContent('#run-output');
      return [code === 'exit code 0' && out.includes('greeted') &&
        out.includes('from-chromium'), code + ' ' + out];
    });
  await step(page, 'browser: no script errors on the pages (CSP holds)',
    async () => [errors.length === 0, errors.join('\n')]);
  await step(page, 'browser: log out', async () => {
    await Promise.all([page.waitForNavigation(), page.click('#logout')]);
    await page.goto(base + '/deployments/' + approveId);
    return [page.url().includes('/login'), page.url()];
  });
  await close(b);
}

async function reader() {
  const b = await browser();
  const page = b.ctx.pages()[0] || await b.ctx.newPage();

  await step(page, 'browser: the reader logs in', async () => {
    await login(page, 'rita');
    return [(await page.textContent('.who .user')) === 'rita', page.url()];
  });
  await step(page, 'browser: the reader sees the deployment but no buttons',
    async () => {
      await page.goto(base + '/deployments/' + forgeId);
      const state = await page.getAttribute('h1 .state', 'data-state');
      const buttons = await page.$$('#approve, #reject');
      return [state === 'pending_approval' && buttons.length === 0,
        state + ' ' + buttons.length];
    });
  await step(page, 'browser: a forged approve form of the reader is refused',
    async () => {
      // A form built by hand in the page, with her own valid token.
      const status = await page.evaluate(async (id) => {
        const csrf = document.querySelector('input[name=csrf]').value;
        const r = await fetch('/deployments/' + id + '/approve', {
          method: 'POST',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
          body: 'csrf=' + encodeURIComponent(csrf),
          redirect: 'manual',
        });
        return r.status;
      }, forgeId);
      return [status === 403, status];
    });
  await close(b);
}

(async () => {
  try {
    await approver();
    await reader();
  } catch (e) {
    ok('browser: the test ran to its end', false, e.stack);
  }
  process.exit(failures ? 1 : 0);
})();
