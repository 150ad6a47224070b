// Finding the language server and a Python to install the bundled one with. No `vscode` import:
// everything here takes its inputs explicitly so it can be unit-tested with node's test runner.
import * as path from "node:path";

export const SERVER_EXECUTABLE = "kin-memory-lsp";
export const MIN_PYTHON: readonly [number, number] = [3, 10];

export type ServerSource = "setting" | "path" | "bundled";

export interface ServerCommand {
  command: string;
  args: string[];
  source: ServerSource;
}

export interface DiscoveryInput {
  /** `kinMemory.server.path`, as configured (may be empty, relative to a folder, or start with `~`). */
  settingPath: string | null | undefined;
  /** `kinMemory.server.args`. */
  settingArgs: readonly unknown[] | null | undefined;
  /** The `PATH` of the extension host. */
  pathEnv: string | undefined;
  platform: NodeJS.Platform;
  home: string;
  /** The private virtual environment the bundled wheel installs into. */
  venvDir: string;
  /** Whether a file exists and may be executed. */
  isExecutable: (file: string) => boolean;
}

/** Only string arguments, in order; anything else in the setting is ignored. */
export function shapeArgs(args: readonly unknown[] | null | undefined): string[] {
  return Array.isArray(args) ? args.filter((a): a is string => typeof a === "string") : [];
}

export function expandHome(p: string, home: string): string {
  if (p === "~") return home;
  if (p.startsWith("~/") || p.startsWith("~\\")) return path.join(home, p.slice(2));
  return p;
}

/** Executable names to try for one program name (Windows adds its executable extensions). */
export function executableNames(name: string, platform: NodeJS.Platform): string[] {
  if (platform !== "win32" || path.extname(name)) return [name];
  return [name + ".exe", name + ".cmd", name + ".bat", name];
}

/** The first `name` on `pathEnv` that is executable, or undefined. */
export function whichOnPath(name: string, pathEnv: string | undefined, platform: NodeJS.Platform,
  isExecutable: (file: string) => boolean): string | undefined {
  const sep = platform === "win32" ? ";" : ":";
  for (const dir of (pathEnv ?? "").split(sep)) {
    if (!dir) continue;
    for (const candidate of executableNames(name, platform)) {
      const full = path.join(dir, candidate);
      if (isExecutable(full)) return full;
    }
  }
  return undefined;
}

export function venvBin(venvDir: string, name: string, platform: NodeJS.Platform): string {
  return platform === "win32" ? path.join(venvDir, "Scripts", name + ".exe") : path.join(venvDir, "bin", name);
}

/**
 * The server to start: the setting (taken as given, even when it does not exist, so that a wrong
 * setting fails loudly instead of silently starting something else), else `kin-memory-lsp` on PATH,
 * else an already installed bundled server. Undefined means the bundled wheel must be installed.
 */
export function findServer(input: DiscoveryInput): ServerCommand | undefined {
  const args = shapeArgs(input.settingArgs);
  const setting = (input.settingPath ?? "").trim();
  if (setting) {
    const expanded = expandHome(setting, input.home);
    // A bare name ("kin-memory-lsp", "false") is looked up on PATH, like a shell would.
    const isBare = !expanded.includes("/") && !expanded.includes("\\");
    const command = isBare ? whichOnPath(expanded, input.pathEnv, input.platform, input.isExecutable) ?? expanded : expanded;
    return { command, args, source: "setting" };
  }
  const onPath = whichOnPath(SERVER_EXECUTABLE, input.pathEnv, input.platform, input.isExecutable);
  if (onPath) return { command: onPath, args, source: "path" };
  const bundled = venvBin(input.venvDir, SERVER_EXECUTABLE, input.platform);
  if (input.isExecutable(bundled)) return { command: bundled, args, source: "bundled" };
  return undefined;
}

/** Parses the output of `python -c "import sys; print(*sys.version_info[:3])"` (or `python --version`). */
export function parsePythonVersion(output: string): [number, number, number] | undefined {
  const m = /(\d+)[. ](\d+)(?:[. ](\d+))?/.exec(output);
  if (!m) return undefined;
  return [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)];
}

export function pythonIsRecentEnough(version: readonly number[] | undefined, min = MIN_PYTHON): boolean {
  if (!version) return false;
  const [major = 0, minor = 0] = version;
  return major > min[0] || (major === min[0] && minor >= min[1]);
}

/** Interpreter names to probe, newest first, then the generic names. */
export function pythonCandidates(platform: NodeJS.Platform): string[] {
  const versioned = ["3.14", "3.13", "3.12", "3.11", "3.10"];
  if (platform === "win32") return ["py", "python3", "python"];
  return [...versioned.map((v) => "python" + v), "python3", "python"];
}

/** The message shown when no usable Python exists, with the ways out. */
export function noPythonMessage(found: readonly string[]): string {
  const seen = found.length ? ` Found only: ${found.join(", ")}.` : "";
  return (
    `Kin Memory needs Python ${MIN_PYTHON.join(".")} or newer to run its language server, and none was found on PATH.${seen} ` +
    "Install Python 3.10+ (and its venv module), or install the server yourself with `pip install kin-memory` " +
    "and set `kinMemory.server.path` to the `kin-memory-lsp` it provides."
  );
}

/** The wheel file bundled in the extension (the newest by name when several are present). */
export function pickWheel(files: readonly string[]): string | undefined {
  const wheels = files.filter((f) => /^kin_memory-.+\.whl$/.test(f)).sort();
  return wheels[wheels.length - 1];
}
