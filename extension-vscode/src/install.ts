// Installing the server wheel bundled in the extension into a private virtual environment.
// No `vscode` import: the process runner is injected so the steps can be unit-tested.
import * as fs from "node:fs";
import * as path from "node:path";
import { execFile } from "node:child_process";
import {
  parsePythonVersion, pythonCandidates, pythonIsRecentEnough, noPythonMessage, venvBin, whichOnPath, SERVER_EXECUTABLE,
} from "./discovery";

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export type Runner = (command: string, args: string[], timeoutMs: number) => Promise<RunResult>;

export const runProcess: Runner = (command, args, timeoutMs) =>
  new Promise((resolve) => {
    execFile(command, args, { timeout: timeoutMs, maxBuffer: 8 * 1024 * 1024, windowsHide: true }, (err, stdout, stderr) => {
      const raw: unknown = err ? (err as { code?: unknown }).code : 0;
      const code = typeof raw === "number" ? raw : 127;
      const errText = String(stderr) || (err ? err.message : "");
      resolve({ code, stdout: String(stdout), stderr: errText });
    });
  });

export class InstallError extends Error {}

export interface PythonFound {
  command: string;
  /** Extra leading arguments (the Windows launcher takes `-3`). */
  prefix: string[];
  version: [number, number, number];
}

const VERSION_SCRIPT = "import sys; print(*sys.version_info[:3])";

/**
 * The first interpreter that is Python ≥ 3.10 and has the venv module. `rejected` collects what was
 * found but is too old, for the error message.
 */
export async function findPython(
  pathEnv: string | undefined, platform: NodeJS.Platform, isExecutable: (f: string) => boolean, run: Runner,
  preferred?: string,
): Promise<{ found?: PythonFound; rejected: string[] }> {
  const rejected: string[] = [];
  const tried = new Set<string>();
  const names = preferred ? [preferred, ...pythonCandidates(platform)] : pythonCandidates(platform);
  for (const name of names) {
    const full = name.includes("/") || name.includes("\\") ? name : whichOnPath(name, pathEnv, platform, isExecutable);
    if (!full || tried.has(full)) continue;
    tried.add(full);
    const prefix = path.basename(full).toLowerCase().startsWith("py.") || path.basename(full) === "py" ? ["-3"] : [];
    const res = await run(full, [...prefix, "-c", VERSION_SCRIPT + "; import venv"], 15000);
    const version = parsePythonVersion(res.stdout);
    if (res.code !== 0 || !version) {
      if (version) rejected.push(`${full} (${version.join(".")}, no venv module)`);
      continue;
    }
    if (!pythonIsRecentEnough(version)) {
      rejected.push(`${full} (${version.join(".")})`);
      continue;
    }
    return { found: { command: full, prefix, version }, rejected };
  }
  return { rejected };
}

export interface Step {
  title: string;
  command: string;
  args: string[];
}

/** The commands that create the environment and install the wheel into it, in order. */
export function installSteps(python: PythonFound, venvDir: string, wheel: string, platform: NodeJS.Platform): Step[] {
  const venvPython = venvBin(venvDir, "python", platform);
  return [
    { title: "creating a private Python environment", command: python.command, args: [...python.prefix, "-m", "venv", "--clear", venvDir] },
    {
      title: "installing the kin-memory server",
      command: venvPython,
      args: ["-m", "pip", "install", "--disable-pip-version-check", "--no-input", "--quiet", wheel],
    },
  ];
}

export const STAMP = ".kin-memory-wheel";

/** Whether the environment already holds exactly this wheel (the stamp names the wheel's file name). */
export function isInstalled(venvDir: string, wheel: string, platform: NodeJS.Platform, isExecutable: (f: string) => boolean): boolean {
  try {
    const stamp = fs.readFileSync(path.join(venvDir, STAMP), "utf8").trim();
    return stamp === path.basename(wheel) && isExecutable(venvBin(venvDir, SERVER_EXECUTABLE, platform));
  } catch {
    return false;
  }
}

export interface InstallOptions {
  venvDir: string;
  wheel: string;
  platform: NodeJS.Platform;
  pathEnv: string | undefined;
  isExecutable: (f: string) => boolean;
  run: Runner;
  report: (message: string) => void;
  log: (line: string) => void;
  preferredPython?: string;
}

/** Installs the bundled wheel and returns the server executable; throws InstallError with a fix. */
export async function installBundledServer(o: InstallOptions): Promise<string> {
  const server = venvBin(o.venvDir, SERVER_EXECUTABLE, o.platform);
  if (isInstalled(o.venvDir, o.wheel, o.platform, o.isExecutable)) return server;
  o.report("looking for Python 3.10+");
  const { found, rejected } = await findPython(o.pathEnv, o.platform, o.isExecutable, o.run, o.preferredPython);
  if (!found) throw new InstallError(noPythonMessage(rejected));
  o.log(`using ${found.command} (Python ${found.version.join(".")})`);
  fs.mkdirSync(path.dirname(o.venvDir), { recursive: true });
  for (const step of installSteps(found, o.venvDir, o.wheel, o.platform)) {
    o.report(step.title);
    o.log(`$ ${step.command} ${step.args.join(" ")}`);
    const res = await o.run(step.command, step.args, 10 * 60 * 1000);
    if (res.stdout.trim()) o.log(res.stdout.trim());
    if (res.stderr.trim()) o.log(res.stderr.trim());
    if (res.code !== 0) {
      throw new InstallError(
        `Kin Memory could not install its server (${step.title} failed with exit code ${res.code}). ` +
        "See the “Kin Memory” output for details; or install it yourself with `pip install kin-memory` and set " +
        "`kinMemory.server.path` to its `kin-memory-lsp`.",
      );
    }
  }
  fs.writeFileSync(path.join(o.venvDir, STAMP), path.basename(o.wheel) + "\n");
  return server;
}
