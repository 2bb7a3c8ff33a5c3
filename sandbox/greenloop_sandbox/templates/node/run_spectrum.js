'use strict';
/*
 * The node template's coverage runner: chosen tests under V8 coverage, one process per test.
 *
 *     node run_spectrum.js --focus ID [--focus ID ...] [--max-tests N] [--seconds S] -- <node --test args>
 *
 * Node's test ids (parsers/tap.py) carry no file, so the runner first finds the focus tests' files:
 * it walks the workspace for node --test's default test files (test/ folders, *.test.js, *-test.js,
 * *_test.js, test-*.js, test.js; node_modules and dot folders left out), keeps those whose text holds a
 * focus test's name (all of them if none does), and lists each kept file's tests by running it once with
 * the TAP reporter and a name pattern nothing matches: node reports every test it found as skipped,
 * without running its body (describe bodies run; subtests made inside a test() body are not found).
 * The ids come from that TAP exactly as parsers/tap.py forms them (the same algorithm; keep the two in
 * step).
 *
 * Then the files' other tests run until `--max-tests` tests or `--seconds` have gone by, and the focus
 * tests last, always (code that runs once per process counts for a passing test, not for them; here
 * every test has its own process, so that only matters for the time budget). Each test runs alone:
 * `node --test --test-name-pattern=^<its name>$ <file>` with NODE_V8_COVERAGE set to a fresh folder,
 * which node --test's child process for the file inherits. The V8 block coverage is turned into lines:
 * a line ran when the innermost range covering its first non-blank character has a count > 0. Only
 * file:// scripts inside the workspace count (node: internals and node_modules do not). The outcome is
 * the test's own TAP result in that run.
 *
 * Prints one line, `SPECTRUM <base64 of zlib'd JSON>`: {"tests": [{"id", "outcome", "focus", "lines":
 * {path: "1-4,9"}}], "seconds", "note"}; paths relative to the working directory, the workspace.
 * Anything that goes wrong is that line with a note and no tests. The args after `--` (the template's
 * {case_timeout}, `--test-timeout=<ms>`) go to each node --test run; each run is also killed, with its
 * process group, a few seconds after that timeout (60 s without one; a file-mate's run at the end of
 * the `--seconds` budget).
 * Plain CommonJS, node 18's built-ins only. Not imported by greenloop_sandbox.
 */

const childProcess = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const url = require('node:url');
const zlib = require('node:zlib');

const MARK = 'SPECTRUM ';
const MAX_BYTES = 600000; // the encoded line stays well under the sandbox's output cap
const NO_MATCH = '^greenloop-spectrum-lists-tests-only$';
const MAX_TAP = 20 * 1024 * 1024; // a flooding test's report is not read

function encode(payload) {
  return zlib.deflateSync(Buffer.from(JSON.stringify(payload)), { level: 6 }).toString('base64');
}

function emit(payload) {
  fs.writeSync(1, MARK + encode(payload) + '\n');
}

function parseArgs(argv) {
  const args = { focus: [], maxTests: 200, seconds: 60, rest: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') { args.rest = argv.slice(i + 1).filter((x) => x !== ''); break; }
    if (a === '--focus') args.focus.push(argv[++i]);
    else if (a === '--max-tests') args.maxTests = parseInt(argv[++i], 10);
    else if (a === '--seconds') args.seconds = parseFloat(argv[++i]);
    else args.rest.push(a);
  }
  return args;
}

// --- test files -----------------------------------------------------------------------------------

const TEST_FILE = /(^|\/)(test|[^/]*[.\-_]test|test-[^/]*)\.[cm]?js$/;

function testFiles(root) {
  const out = [];
  const walk = (dir, rel, inTest) => {
    let entries;
    try { entries = fs.readdirSync(dir, { withFileTypes: true }); } catch { return; }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      if (e.name === 'node_modules' || e.name.startsWith('.')) continue;
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(path.join(dir, e.name), r, inTest || e.name === 'test');
      else if (e.isFile() && ((inTest && /\.[cm]?js$/.test(e.name)) || TEST_FILE.test(r))) out.push(r);
    }
  };
  walk(root, '', false);
  return out;
}

// --- TAP: the ids as parsers/tap.py forms them ----------------------------------------------------

const TAP_TEST = /^( *)(ok|not ok) \d+(?: - (.*?))?(?: # (SKIP|TODO)\b.*)?$/i;

function readTap(text, root) {
  const lines = text.split(/\r?\n/);
  const tests = [];
  const childrenAt = new Map();
  let i = 0;
  while (i < lines.length) {
    const m = TAP_TEST.exec(lines[i]);
    i += 1;
    if (!m) continue;
    const depth = Math.floor(m[1].length / 4);
    const t = { depth, ok: m[2].toLowerCase() === 'ok', name: (m[3] || '').trim(),
      directive: (m[4] || '').toUpperCase(), failureType: '', isParent: false };
    t.isParent = (childrenAt.get(depth + 1) || 0) > 0;
    childrenAt.set(depth + 1, 0);
    childrenAt.set(depth, (childrenAt.get(depth) || 0) + 1);
    if (i < lines.length && lines[i].trim() === '---') {
      i += 1;
      while (i < lines.length && lines[i].trim() !== '...') {
        const f = /^\s*failureType:\s*'?([\w]+)'?/.exec(lines[i]);
        if (f) t.failureType = f[1];
        i += 1;
      }
      i += 1;
    }
    tests.push(t);
  }
  const isFile = (n) => n.startsWith('/') || n.startsWith('file://');
  const rel = (p) => {
    const q = p.startsWith('file://') ? p.slice(7) : p;
    const r = root.replace(/\/+$/, '') + '/';
    return q.startsWith(r) ? q.slice(r.length) : q;
  };
  // a parent's own line comes after its children's: the chain is read from the end (as tap.py does)
  const out = [];
  let parents = new Map();
  for (const t of [...tests].reverse()) {
    parents = new Map([...parents].filter(([d]) => d < t.depth));
    if (t.isParent) { parents.set(t.depth, t.name); continue; }
    const chain = [...parents.keys()].sort((a, b) => a - b).map((d) => parents.get(d)).filter((n) => !isFile(n));
    const own = isFile(t.name) ? rel(t.name) : t.name;
    let outcome = 'passed';
    if (t.directive === 'SKIP' || t.directive === 'TODO') outcome = 'skipped';
    else if (!t.ok) outcome = (t.failureType || 'testCodeFailure') === 'testCodeFailure' ? 'failed' : 'error';
    out.push({ id: [...chain, own].join(' > '), name: t.name, fileLevel: isFile(t.name), outcome });
  }
  return out.reverse();
}

function unescapeTap(name) {
  const map = { n: '\n', t: '\t', r: '\r', b: '\b', f: '\f', v: '\v' };
  return name.replace(/\\(.)/g, (_, c) => (c in map ? map[c] : c));
}

function escapeRegex(s) {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

// --- running node --test --------------------------------------------------------------------------

function runNode(argv, env, killAfterMs, tapPath) {
  return new Promise((resolve) => {
    const child = childProcess.spawn(process.execPath, argv, { env, stdio: 'ignore', detached: true });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ }
    }, killAfterMs);
    const done = (code) => {
      clearTimeout(timer);
      try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone: the group's stragglers too */ }
      let tap = '';
      try {
        if (fs.statSync(tapPath).size <= MAX_TAP) tap = fs.readFileSync(tapPath, 'utf8');
      } catch { /* no report */ }
      resolve({ code, timedOut, tap });
    };
    child.on('error', () => done(-1));
    child.on('exit', (code) => done(code === null ? -1 : code));
  });
}

// --- V8 coverage -> lines -------------------------------------------------------------------------

function coveredLines(covDir, root, sources) {
  const lines = new Map(); // relative path -> Set of line numbers
  let files = [];
  try { files = fs.readdirSync(covDir).filter((f) => f.endsWith('.json')); } catch { return lines; }
  for (const f of files) {
    let data;
    try { data = JSON.parse(fs.readFileSync(path.join(covDir, f), 'utf8')); } catch { continue; }
    for (const script of data.result || []) {
      if (!script.url || !script.url.startsWith('file://')) continue;
      let file;
      try { file = url.fileURLToPath(script.url); } catch { continue; }
      const relPath = path.relative(root, file);
      if (!relPath || relPath.startsWith('..') || path.isAbsolute(relPath)) continue;
      if (relPath.split(path.sep).includes('node_modules')) continue;
      let source = sources.get(file);
      if (source === undefined) {
        try { source = fs.readFileSync(file, 'utf8'); } catch { source = null; }
        sources.set(file, source);
      }
      if (source === null) continue;
      const ranges = [];
      for (const fn of script.functions || []) for (const r of fn.ranges || []) ranges.push(r);
      // the innermost range decides: paint the widest first, the narrower ones over them
      ranges.sort((a, b) => (b.endOffset - b.startOffset) - (a.endOffset - a.startOffset));
      const counts = new Int32Array(source.length + 1).fill(-1);
      for (const r of ranges) counts.fill(r.count > 0 ? 1 : 0, Math.max(0, r.startOffset), Math.min(source.length, r.endOffset));
      const ran = lines.get(relPath) || new Set();
      let offset = 0;
      const text = source.split('\n');
      for (let n = 0; n < text.length; n++) {
        const col = text[n].search(/\S/);
        if (col >= 0 && counts[offset + col] > 0) ran.add(n + 1);
        offset += text[n].length + 1;
      }
      if (ran.size) lines.set(relPath, ran);
    }
  }
  return lines;
}

function ranges(sorted) {
  const out = [];
  let start = sorted[0];
  let prev = sorted[0];
  for (const n of sorted.slice(1)) {
    if (n !== prev + 1) { out.push(prev > start ? `${start}-${prev}` : `${start}`); start = n; }
    prev = n;
  }
  out.push(prev > start ? `${start}-${prev}` : `${start}`);
  return out.join(',');
}

// --- main -----------------------------------------------------------------------------------------

async function main() {
  const started = Date.now();
  const args = parseArgs(process.argv.slice(2));
  const root = process.cwd();
  const seconds = () => Math.round(Date.now() - started) / 1000;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'greenloop-spectrum-'));
  const ms = args.rest.map((a) => /^--test-timeout=(\d+)$/.exec(a)).find(Boolean);
  const killAfter = ms ? parseInt(ms[1], 10) + 5000 : 60000;
  const deadline = started + args.seconds * 1000;
  let runs = 0;
  const run = async (file, pattern, coverage, focus = true) => {
    runs += 1;
    // without node's --test-timeout (node 18) a hung file-mate must not outlive the time budget
    const limit = focus ? killAfter : Math.min(killAfter, Math.max(5000, deadline - Date.now() + 5000));
    const tapPath = path.join(tmp, `run-${runs}.tap`);
    const env = { ...process.env };
    delete env.NODE_V8_COVERAGE;
    if (coverage) env.NODE_V8_COVERAGE = coverage;
    const argv = ['--test', ...args.rest, `--test-name-pattern=${pattern}`, '--test-reporter=tap',
      `--test-reporter-destination=${tapPath}`, file];
    return runNode(argv, env, limit, tapPath);
  };
  try {
    const focus = [...new Set(args.focus.filter(Boolean))];
    if (!focus.length) return emit({ tests: [], seconds: seconds(), note: 'no focus test' });
    const leaves = focus.map((id) => id.split(' > ').pop());
    let files = testFiles(root);
    const mentions = files.filter((f) => {
      let text = '';
      try { text = fs.readFileSync(path.join(root, f), 'utf8'); } catch { return false; }
      return leaves.some((l) => text.includes(unescapeTap(l)));
    });
    if (mentions.length) files = mentions;
    // each file's tests, listed without running them; the files that hold a focus test are kept
    const byFile = [];
    const problems = [];
    const wanted = new Set(focus);
    const found = new Set();
    for (const file of files) {
      const listed = await run(file, NO_MATCH, null);
      const tests = readTap(listed.tap, root).filter((t) => !t.fileLevel);
      if (!tests.length && listed.code !== 0) problems.push(`${file}: node --test exit ${listed.code}`);
      if (tests.some((t) => wanted.has(t.id))) {
        byFile.push({ file, tests });
        for (const t of tests) if (wanted.has(t.id)) found.add(t.id);
      }
      if (found.size === wanted.size) break;
    }
    if (!byFile.length) {
      const why = problems.length ? `; ${problems.slice(0, 3).join('; ')}` : '';
      return emit({ tests: [], seconds: seconds(), note: `no test file holds the focus tests${why}` });
    }
    const first = [];
    const last = [];
    const seen = new Set();
    for (const { file, tests } of byFile) {
      for (const t of tests) {
        if (seen.has(t.id)) continue;
        seen.add(t.id);
        (wanted.has(t.id) ? last : first).push({ file, ...t, focus: wanted.has(t.id) });
      }
    }
    const room = Math.max(0, args.maxTests - last.length);
    const chosen = [...first.slice(0, room), ...last];
    const sources = new Map();
    const results = [];
    for (const t of chosen) {
      if (!t.focus && Date.now() > deadline) continue; // out of time: the passing side stops here
      const covDir = fs.mkdtempSync(path.join(tmp, 'cov-'));
      const pattern = `^${escapeRegex(unescapeTap(t.name))}$`;
      const res = await run(t.file, pattern, covDir, t.focus);
      const mine = readTap(res.tap, root).find((x) => x.id === t.id);
      let outcome = mine ? mine.outcome : 'error';
      if (res.timedOut && (!mine || outcome === 'passed')) outcome = 'failed';
      const lines = {};
      for (const [p, set] of coveredLines(covDir, root, sources)) lines[p] = ranges([...set].sort((a, b) => a - b));
      fs.rmSync(covDir, { recursive: true, force: true });
      results.push({ id: t.id, outcome, focus: t.focus, lines });
    }
    const missing = focus.filter((id) => !found.has(id));
    const payload = { tests: results, seconds: seconds(),
      note: missing.length ? `focus tests not found in the test files: ${missing.slice(0, 5).join(', ')}` : '' };
    let text = encode(payload);
    let tests = results;
    const nFocus = results.filter((t) => t.focus).length;
    while (text.length > MAX_BYTES && tests.length > nFocus) { // drop passing tests from the front's end
      const others = tests.filter((t) => !t.focus);
      tests = [...others.slice(0, Math.floor(others.length * 3 / 4)), ...tests.filter((t) => t.focus)];
      payload.tests = tests;
      payload.note = 'passing tests cut to fit the output';
      text = encode(payload);
    }
    fs.writeSync(1, MARK + text + '\n');
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((err) => {
  try {
    emit({ tests: [], seconds: 0, note: `the coverage runner failed: ${String(err && err.stack || err).slice(0, 500)}` });
  } catch { /* nothing more to do */ }
}).finally(() => process.exit(0));
