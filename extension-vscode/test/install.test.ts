import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { findPython, installBundledServer, installSteps, InstallError, isInstalled, runProcess, STAMP, type Runner } from "../src/install";

const exe = (paths: string[]) => (f: string) => paths.includes(f);

function fakeRunner(versions: Record<string, string>, calls: string[][] = []): Runner {
  return (command, args) => {
    calls.push([command, ...args]);
    const v = versions[command];
    if (v === undefined) return Promise.resolve({ code: 127, stdout: "", stderr: "not found" });
    if (v === "novenv") return Promise.resolve({ code: 1, stdout: "3 12 1\n", stderr: "No module named venv" });
    return Promise.resolve({ code: 0, stdout: v + "\n", stderr: "" });
  };
}

test("findPython skips old interpreters and ones without venv, and reports them", async () => {
  const isExe = exe(["/usr/bin/python3.12", "/usr/bin/python3", "/usr/bin/python"]);
  const run = fakeRunner({ "/usr/bin/python3.12": "novenv", "/usr/bin/python3": "3 9 2", "/usr/bin/python": "3 11 4" });
  const { found, rejected } = await findPython("/usr/bin", "linux", isExe, run);
  assert.deepEqual(found, { command: "/usr/bin/python", prefix: [], version: [3, 11, 4] });
  assert.deepEqual(rejected, ["/usr/bin/python3.12 (3.12.1, no venv module)", "/usr/bin/python3 (3.9.2)"]);
});

test("findPython gives up cleanly when nothing fits", async () => {
  const { found, rejected } = await findPython("/usr/bin", "linux", exe(["/usr/bin/python3"]), fakeRunner({ "/usr/bin/python3": "3 8 0" }));
  assert.equal(found, undefined);
  assert.deepEqual(rejected, ["/usr/bin/python3 (3.8.0)"]);
});

test("the Windows launcher gets -3", async () => {
  const calls: string[][] = [];
  const { found } = await findPython("C:\\py", "win32", (f) => f === path.join("C:\\py", "py.exe"),
    fakeRunner({ [path.join("C:\\py", "py.exe")]: "3 12 0" }, calls), undefined);
  assert.deepEqual(found?.prefix, ["-3"]);
  assert.equal(calls[0][1], "-3");
});

test("install steps: a fresh venv, then pip installs the wheel with the venv's own python", () => {
  const steps = installSteps({ command: "/usr/bin/python3", prefix: [], version: [3, 11, 0] }, "/s/venv", "/ext/w.whl", "linux");
  assert.deepEqual(steps.map((s) => [s.command, ...s.args]), [
    ["/usr/bin/python3", "-m", "venv", "--clear", "/s/venv"],
    ["/s/venv/bin/python", "-m", "pip", "install", "--disable-pip-version-check", "--no-input", "--quiet", "/ext/w.whl"],
  ]);
});

test("installBundledServer runs the steps, stamps the wheel and is idempotent", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kin-install-"));
  const venv = path.join(dir, "venv");
  const calls: string[][] = [];
  const server = path.join(venv, "bin", "kin-memory-lsp");
  const run: Runner = (command, args) => {
    calls.push([command, ...args]);
    if (args.includes("-c")) return Promise.resolve({ code: 0, stdout: "3 11 7\n", stderr: "" });
    if (args.includes("venv")) fs.mkdirSync(path.join(venv, "bin"), { recursive: true });
    if (args.includes("pip")) fs.writeFileSync(server, "");
    return Promise.resolve({ code: 0, stdout: "", stderr: "" });
  };
  const isExecutable = (f: string) => f === "/usr/bin/python3" || fs.existsSync(f);
  const reports: string[] = [];
  const opts = {
    venvDir: venv, wheel: "/ext/server-wheel/kin_memory-0.1.0-py3-none-any.whl", platform: "linux" as const,
    pathEnv: "/usr/bin", isExecutable, run, report: (m: string) => reports.push(m), log: () => undefined,
  };
  assert.equal(await installBundledServer(opts), server);
  assert.equal(fs.readFileSync(path.join(venv, STAMP), "utf8").trim(), "kin_memory-0.1.0-py3-none-any.whl");
  assert.deepEqual(reports, ["looking for Python 3.10+", "creating a private Python environment", "installing the kin-memory server"]);
  assert.equal(isInstalled(venv, opts.wheel, "linux", isExecutable), true);
  const before = calls.length;
  assert.equal(await installBundledServer(opts), server);
  assert.equal(calls.length, before, "a second install with the same wheel runs nothing");
  assert.equal(isInstalled(venv, "/ext/server-wheel/kin_memory-0.2.0-py3-none-any.whl", "linux", isExecutable), false);
  fs.rmSync(dir, { recursive: true, force: true });
});

test("installBundledServer fails with the fix when there is no Python or pip fails", async () => {
  const base = { venvDir: "/nonexistent/venv", wheel: "/w.whl", platform: "linux" as const, pathEnv: "/usr/bin", report: () => undefined, log: () => undefined };
  await assert.rejects(installBundledServer({ ...base, isExecutable: () => false, run: fakeRunner({}) }),
    (e: unknown) => e instanceof InstallError && /Python 3\.10 or newer/.test(e.message));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "kin-install-"));
  const failing: Runner = (_c, args) => Promise.resolve(args.includes("-c") ? { code: 0, stdout: "3 12 0", stderr: "" }
    : args.includes("pip") ? { code: 1, stdout: "", stderr: "no network" } : { code: 0, stdout: "", stderr: "" });
  await assert.rejects(installBundledServer({ ...base, venvDir: path.join(dir, "v"), isExecutable: (f) => f === "/usr/bin/python3", run: failing }),
    (e: unknown) => e instanceof InstallError && /installing the kin-memory server failed with exit code 1/.test(e.message));
  fs.rmSync(dir, { recursive: true, force: true });
});

test("runProcess reports exit codes and missing programs", async () => {
  const ok = await runProcess(process.execPath, ["-e", "process.stdout.write('hi'); process.exit(3)"], 10000);
  assert.deepEqual([ok.code, ok.stdout], [3, "hi"]);
  const missing = await runProcess("/nonexistent/python", [], 10000);
  assert.equal(missing.code, 127);
  assert.match(missing.stderr, /ENOENT/);
});
