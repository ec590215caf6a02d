/*
 * The dashboard's two static files, compiled in: the webworker has no
 * filesystem.  The pages work without the script; it only refreshes the
 * content of a page that asks for it (data-refresh on <body>) while the
 * page is visible and no form field has the focus.
 */
#include "config.h"

#include <string.h>

#include "nops.h"
#include "web.h"

static const char web_css[] =
"*{box-sizing:border-box}\n"
"body{margin:0;font:14px/1.45 system-ui,-apple-system,\"Segoe UI\",sans-serif;"
"color:#1d2330;background:#f5f6f8}\n"
"a{color:#1f5fbf;text-decoration:none}a:hover{text-decoration:underline}\n"
"header{background:#1d2330;color:#fff}\n"
"nav{display:flex;align-items:center;gap:1.2em;max-width:1200px;"
"margin:0 auto;padding:.6em 1em}\n"
"nav a{color:#cfd6e4}nav a.cur{color:#fff;font-weight:600}\n"
"nav .brand{color:#fff;font-weight:700;letter-spacing:.05em}\n"
"nav .who{margin-left:auto;color:#cfd6e4;display:flex;gap:.6em;"
"align-items:center}\n"
"nav .who form{margin:0}nav .who button{background:none;border:1px solid"
" #56607a;color:#cfd6e4;padding:.15em .6em;border-radius:4px;"
"cursor:pointer}\n"
"main{max-width:1200px;margin:0 auto;padding:1em}\n"
"h1{font-size:1.4em;margin:.4em 0 .6em}h2{font-size:1.1em;"
"margin:1.4em 0 .5em}\n"
"section.box{background:#fff;border:1px solid #dde1e8;border-radius:6px;"
"padding:.8em 1em;margin-bottom:1em}\n"
"table{border-collapse:collapse;width:100%;background:#fff}\n"
"th,td{text-align:left;padding:.35em .6em;border-bottom:1px solid #e6e9ef;"
"vertical-align:top}\n"
"th{font-weight:600;color:#56607a;font-size:.9em}\n"
"td.num{text-align:right}\n"
"code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;"
"font-size:.92em}\n"
".state{display:inline-block;padding:.05em .55em;border-radius:1em;"
"font-size:.85em;background:#e6e9ef;color:#39414f;white-space:nowrap}\n"
".s-ok{background:#dcf3e3;color:#17683a}\n"
".s-wait{background:#fff0cc;color:#7a5200}\n"
".s-run{background:#dde9fb;color:#1f4f99}\n"
".s-bad{background:#fbe0e0;color:#9b1c1c}\n"
".muted{color:#6b7385}\n"
".gd-add{color:#17683a}.gd-del{color:#9b1c1c}.gd-hunk{color:#6b7385}\n"
".counts{display:flex;flex-wrap:wrap;gap:.6em;margin:.4em 0 1em}\n"
".counts a,.counts span{background:#fff;border:1px solid #dde1e8;"
"border-radius:6px;padding:.4em .8em}\n"
".counts .hot{border-color:#e0a800;background:#fff8e1}\n"
".msg{padding:.6em 1em;border-radius:6px;margin:.6em 0}\n"
".msg.done{background:#dcf3e3}.msg.error{background:#fbe0e0}"
".msg.info{background:#e6eefb}.msg.warn{background:#fff8e1}\n"
".actions{display:flex;flex-wrap:wrap;gap:.6em;align-items:flex-end;"
"margin:.6em 0}\n"
".actions form{display:flex;gap:.4em;align-items:center;margin:0}\n"
"button{font:inherit;padding:.35em .9em;border-radius:4px;border:1px solid"
" #9aa3b5;background:#fff;cursor:pointer}\n"
"button.primary{background:#1f5fbf;border-color:#1f5fbf;color:#fff}\n"
"button.danger{border-color:#c0392b;color:#c0392b}\n"
"input[type=text],input[type=password],select{font:inherit;padding:.3em .5em;"
"border:1px solid #9aa3b5;border-radius:4px}\n"
"ol.plan li{margin:.25em 0}\n"
".diff .obj{margin:.3em 0 .3em 1.2em;border-left:2px solid #e6e9ef;"
"padding-left:.6em}\n"
".diff .head{font-weight:600}\n"
".diff table{width:auto;min-width:50%}\n"
".t-Added{color:#17683a}.t-Deleted{color:#9b1c1c}.t-Edited{color:#7a5200}\n"
".old{color:#9b1c1c}.new{color:#17683a}\n"
".pager{display:flex;gap:1em;margin:.8em 0}\n"
".login{max-width:360px;margin:4em auto;background:#fff;border:1px solid"
" #dde1e8;border-radius:6px;padding:1.5em}\n"
".login label{display:block;margin:.6em 0 .2em}\n"
".login input{width:100%}.login button{margin-top:1em;width:100%}\n"
"footer{max-width:1200px;margin:0 auto;padding:1em;color:#6b7385;"
"font-size:.85em}\n"
"form.filter{display:flex;gap:.5em;flex-wrap:wrap;align-items:center;"
"margin:.4em 0 .8em}\n";

static const char web_js[] =
"// nops dashboard: refresh the page while it is shown (progressive).\n"
"(function () {\n"
"  'use strict';\n"
"  var body = document.body;\n"
"  if (window.history && history.replaceState &&\n"
"      /[?&]done=/.test(location.search)) {\n"
"    // The action is done: a reload should not say it again.\n"
"    var u = new URL(location.href);\n"
"    u.searchParams.delete('done');\n"
"    history.replaceState(null, '', u.pathname + u.search);\n"
"  }\n"
"  // An action that asks a question first (its \"confirm\").\n"
"  document.addEventListener('submit', function (e) {\n"
"    var q = e.target.getAttribute && e.target.getAttribute('data-confirm');\n"
"    if (q && !window.confirm(q)) e.preventDefault();\n"
"  });\n"
"  var secs = parseInt(body.getAttribute('data-refresh') || '0', 10);\n"
"  if (!secs || !window.fetch || !window.DOMParser) return;\n"
"  var busy = false;\n"
"  function editing() {\n"
"    var a = document.activeElement;\n"
"    return a && /^(INPUT|TEXTAREA|SELECT)$/.test(a.tagName) &&\n"
"      a.type !== 'hidden';\n"
"  }\n"
"  function tick() {\n"
"    if (busy || document.hidden || editing()) return;\n"
"    busy = true;\n"
"    fetch(location.href, {credentials: 'same-origin',\n"
"                          headers: {'Accept': 'text/html'}})\n"
"      .then(function (r) {\n"
"        if (!r.ok || r.redirected) throw new Error('status ' + r.status);\n"
"        return r.text();\n"
"      })\n"
"      .then(function (t) {\n"
"        var doc = new DOMParser().parseFromString(t, 'text/html');\n"
"        var fresh = doc.getElementById('main');\n"
"        var cur = document.getElementById('main');\n"
"        if (fresh && cur && fresh.innerHTML !== cur.innerHTML)\n"
"          cur.replaceWith(document.importNode(fresh, true));\n"
"        body.setAttribute('data-refreshed', String(Date.now()));\n"
"      })\n"
"      .catch(function () {})\n"
"      .then(function () { busy = false; });\n"
"  }\n"
"  setInterval(tick, secs * 1000);\n"
"})();\n";

static const char web_svg[] =
"<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 16 16\">"
"<rect width=\"16\" height=\"16\" rx=\"3\" fill=\"#1d2330\"/>"
"<path d=\"M4 12V4l8 8V4\" stroke=\"#fff\" stroke-width=\"2\" "
"fill=\"none\"/></svg>\n";

/* The files, with their types; they change only with the binary. */
int
web_static(struct web_rq *rq, const char *name)
{
	const char	*ctype, *data;
	size_t		 len;

	if (strcmp(name, "nops.css") == 0) {
		ctype = "text/css; charset=utf-8";
		data = web_css;
		len = sizeof(web_css) - 1;
	} else if (strcmp(name, "nops.js") == 0) {
		ctype = "text/javascript; charset=utf-8";
		data = web_js;
		len = sizeof(web_js) - 1;
	} else if (strcmp(name, "nops.svg") == 0) {
		ctype = "image/svg+xml";
		data = web_svg;
		len = sizeof(web_svg) - 1;
	} else
		return -1;
	/* Pages link them with ?v=<version>: safe to keep a day. */
	web_add_header(rq, "Cache-Control", "public, max-age=86400");
	web_reply(rq, 200, ctype, data, len);
	return 0;
}
