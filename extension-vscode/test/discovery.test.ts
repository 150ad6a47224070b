import { test } from "node:test";
import assert from "node:assert/strict";
import * as path from "node:path";
import {
  executableNames, expandHome, findServer, noPythonMessage, parsePythonVersion, pickWheel, pythonCandidates,
  pythonIsRecentEnough, shapeArgs, venvBin, whichOnPath, type DiscoveryInput,
} from "../src/discovery";

function input(over: Partial<DiscoveryInput>, executables: string[] = []): DiscoveryInput {
  const set = new Set(executables);
  return {
    settingPath: undefined, settingArgs: [], pathEnv: "/usr/local/bin:/usr/bin", platform: "linux", home: "/home/u",
    venvDir: "/store/server-venv", isExecutable: (f) => set.has(f), ...over,
  };
}

test("the setting wins over PATH and the bundled server, and is taken as given", () => {
  const found = findServer(input({ settingPath: "/opt/km/bin/kin-memory-lsp" }, ["/usr/bin/kin-memory-lsp"]));
  assert.deepEqual(found, { command: "/opt/km/bin/kin-memory-lsp", args: [], source: "setting" });
  // A setting that points nowhere is not silently replaced by another server.
  assert.equal(findServer(input({ settingPath: "/nowhere/kin-memory-lsp" }, ["/usr/bin/kin-memory-lsp"]))?.command,
    "/nowhere/kin-memory-lsp");
});

test("a bare name in the setting is looked up on PATH; ~ expands to home", () => {
  assert.equal(findServer(input({ settingPath: "false" }, ["/usr/bin/false"]))?.command, "/usr/bin/false");
  assert.equal(findServer(input({ settingPath: "unknown-cmd" }))?.command, "unknown-cmd");
  assert.equal(findServer(input({ settingPath: "~/venv/bin/kin-memory-lsp" }))?.command, "/home/u/venv/bin/kin-memory-lsp");
  assert.equal(findServer(input({ settingPath: "  " }, ["/usr/bin/kin-memory-lsp"]))?.source, "path");
});

test("PATH is searched in order, then the bundled environment, else nothing", () => {
  const both = ["/usr/local/bin/kin-memory-lsp", "/usr/bin/kin-memory-lsp"];
  assert.deepEqual(findServer(input({}, both)), { command: "/usr/local/bin/kin-memory-lsp", args: [], source: "path" });
  assert.deepEqual(findServer(input({}, ["/store/server-venv/bin/kin-memory-lsp"])),
    { command: "/store/server-venv/bin/kin-memory-lsp", args: [], source: "bundled" });
  assert.equal(findServer(input({ pathEnv: undefined })), undefined);
});

test("server arguments keep only strings, in order", () => {
  assert.deepEqual(shapeArgs(["--root", 3, "/x", null, "--workspace"]), ["--root", "/x", "--workspace"]);
  assert.deepEqual(shapeArgs(undefined), []);
  assert.deepEqual(shapeArgs("--root" as unknown as unknown[]), []);
  assert.deepEqual(findServer(input({ settingArgs: ["--tcp", 1] }, ["/usr/bin/kin-memory-lsp"]))?.args, ["--tcp"]);
});

test("Windows names and layout", () => {
  assert.deepEqual(executableNames("kin-memory-lsp", "win32"), ["kin-memory-lsp.exe", "kin-memory-lsp.cmd", "kin-memory-lsp.bat", "kin-memory-lsp"]);
  assert.deepEqual(executableNames("python", "linux"), ["python"]);
  assert.equal(venvBin("C:\\v", "kin-memory-lsp", "win32"), path.join("C:\\v", "Scripts", "kin-memory-lsp.exe"));
  const hit = whichOnPath("py", "C:\\a;C:\\b", "win32", (f) => f === path.join("C:\\b", "py.exe"));
  assert.equal(hit, path.join("C:\\b", "py.exe"));
  assert.deepEqual(pythonCandidates("win32"), ["py", "python3", "python"]);
});

test("expandHome only touches a leading ~", () => {
  assert.equal(expandHome("~", "/h"), "/h");
  assert.equal(expandHome("~/x", "/h"), path.join("/h", "x"));
  assert.equal(expandHome("/a/~/x", "/h"), "/a/~/x");
  assert.equal(expandHome("~user/x", "/h"), "~user/x");
});

test("Python versions: parsing and the 3.10 floor", () => {
  assert.deepEqual(parsePythonVersion("3 11 7\n"), [3, 11, 7]);
  assert.deepEqual(parsePythonVersion("Python 3.10.13"), [3, 10, 13]);
  assert.equal(parsePythonVersion("garbage"), undefined);
  assert.equal(pythonIsRecentEnough([3, 10, 0]), true);
  assert.equal(pythonIsRecentEnough([3, 9, 18]), false);
  assert.equal(pythonIsRecentEnough([4, 0, 0]), true);
  assert.equal(pythonIsRecentEnough([2, 7, 18]), false);
  assert.equal(pythonIsRecentEnough(undefined), false);
  assert.equal(pythonCandidates("linux").at(-1), "python");
  assert.equal(pythonCandidates("linux")[0], "python3.14");
});

test("the no-Python message names what was found and both fixes", () => {
  const msg = noPythonMessage(["/usr/bin/python3 (3.9.2)"]);
  assert.match(msg, /Python 3\.10 or newer/);
  assert.match(msg, /Found only: \/usr\/bin\/python3 \(3\.9\.2\)/);
  assert.match(msg, /kinMemory\.server\.path/);
  assert.match(msg, /pip install kin-memory/);
  assert.doesNotMatch(noPythonMessage([]), /Found only/);
});

test("the bundled wheel is picked by name", () => {
  assert.equal(pickWheel(["README", "kin_memory-0.1.0-py3-none-any.whl", "kin_memory-0.2.0-py3-none-any.whl"]),
    "kin_memory-0.2.0-py3-none-any.whl");
  assert.equal(pickWheel(["other-1.0-py3-none-any.whl"]), undefined);
  assert.equal(pickWheel([]), undefined);
});
