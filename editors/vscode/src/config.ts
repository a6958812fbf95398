// Pure mapping from the extension's settings to how argus-lsp is started and
// configured. Kept free of the `vscode` module so that it can be unit-tested
// under plain Node.
import { isAbsolute, join } from "path";

export const TARGETS = ["sm_80", "sm_90", "sm_90a"] as const;
/** "" is "as argusc without --arch": the file's `# arch:` line, else sm_90. */
export type Target = (typeof TARGETS)[number] | "";
export const DEFAULT_TARGET: Target = "";

/** Where a default `argus.server.path` is looked for, besides PATH (relative to the workspace folder). */
export const WORKSPACE_BUILDS = ["build/argus-lsp", "build-release/argus-lsp", "build-lsp/argus-lsp"];

/** The `argus.*` settings, as read from the workspace configuration. */
export interface ArgusSettings {
  serverPath?: unknown;
  /** The first workspace folder, for `${workspaceFolder}` and relative paths like `build/argus-lsp`. */
  workspaceFolder?: string;
  serverArgs?: unknown;
  target?: unknown;
  defines?: unknown;
  /** argus.inlayHints.registers: show ptxas's register count after each kernel's header. */
  registerHints?: unknown;
}

export interface ServerCommand {
  command: string;
  args: string[];
}

/** What the server reads from `workspace/didChangeConfiguration` (`settings.argus`). */
export interface ServerSettings {
  argus: {
    /** The architecture ("" = the file's `# arch:` line, else sm_90); argus-lsp reads both names. */
    arch: Target;
    target: Target;
    /** `-D NAME=VALUE` values, as strings. */
    defines: Record<string, string>;
    /** false: the server does not run ptxas after checks for register-count hints. */
    inlayHints: { registers: boolean };
  };
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The executable and arguments to start the server with, over stdio. */
export function serverCommand(settings: ArgusSettings): ServerCommand {
  let path = typeof settings.serverPath === "string" && settings.serverPath.trim() !== ""
    ? settings.serverPath.trim()
    : "argus-lsp";
  const folder = settings.workspaceFolder;
  if (folder) {
    path = path.split("${workspaceFolder}").join(folder);
    // A bare name is looked up on PATH; a relative path is relative to the workspace.
    if (path.includes("/") && !isAbsolute(path)) path = join(folder, path);
  }
  const args = Array.isArray(settings.serverArgs)
    ? settings.serverArgs.filter((a): a is string => typeof a === "string" && a !== "")
    : [];
  return { command: path, args };
}

/** What `locateServer` needs from the machine (a stand-in in tests). */
export interface Finder {
  isExecutable(path: string): boolean;
  /** The directories of PATH, in order. */
  pathDirs: string[];
  /** The user's home, for ~/.local/bin (where scripts/install.sh puts the tools). */
  home?: string;
}

export type ServerLocation =
  | { command: string; args: string[]; foundIn: "setting" | "PATH" | "home" | "workspace" }
  | { command: undefined; looked: string[] };

/**
 * The server to start: an explicit `argus.server.path` as given; the default
 * (`argus-lsp`) is looked for on PATH, then in ~/.local/bin, then in the
 * workspace's build folders. Nothing found: where it looked, for the message.
 */
export function locateServer(settings: ArgusSettings, finder: Finder): ServerLocation {
  const { command, args } = serverCommand(settings);
  if (command !== "argus-lsp") return { command, args, foundIn: "setting" };
  const looked: string[] = [];
  for (const dir of finder.pathDirs) {
    if (!dir) continue;
    const candidate = join(dir, "argus-lsp");
    if (finder.isExecutable(candidate)) return { command: candidate, args, foundIn: "PATH" };
  }
  looked.push("PATH");
  if (finder.home) {
    const candidate = join(finder.home, ".local", "bin", "argus-lsp");
    if (finder.isExecutable(candidate)) return { command: candidate, args, foundIn: "home" };
    looked.push(candidate);
  }
  if (settings.workspaceFolder) {
    for (const relative of WORKSPACE_BUILDS) {
      const candidate = join(settings.workspaceFolder, relative);
      if (finder.isExecutable(candidate)) return { command: candidate, args, foundIn: "workspace" };
      looked.push(candidate);
    }
  }
  return { command: undefined, looked };
}

/** What to tell the user when no server was found: where we looked and exactly how to fix it. */
export function notFoundMessage(looked: string[]): string {
  return (
    `Argus: the language server argus-lsp was not found (looked in: ${looked.join(", ")}). ` +
    "In the Argus checkout run `scripts/install.sh` (builds, then installs argusc and argus-lsp into ~/.local/bin), " +
    "or build it with `cmake --build build --target argus-lsp` in this workspace, " +
    'or set "argus.server.path" to the argus-lsp executable; then run "Argus: Restart Language Server".'
  );
}

export function normalizeTarget(value: unknown): Target {
  return (TARGETS as readonly unknown[]).includes(value) ? (value as Target) : DEFAULT_TARGET;
}

/**
 * Defines are accepted as an object (`{"BM": 64}`) or as `-D`-style strings
 * (`["BM=64"]`); names that are not identifiers and values that are not
 * scalars are dropped rather than sent to the server.
 */
export function normalizeDefines(value: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  const put = (name: string, v: unknown) => {
    if (!NAME.test(name)) return;
    if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") out[name] = String(v);
  };
  if (Array.isArray(value)) {
    for (const item of value) {
      if (typeof item !== "string") continue;
      const eq = item.indexOf("=");
      if (eq > 0) put(item.slice(0, eq).trim(), item.slice(eq + 1).trim());
    }
  } else if (value !== null && typeof value === "object") {
    for (const [name, v] of Object.entries(value as Record<string, unknown>)) put(name, v);
  }
  return out;
}

/** The payload of `workspace/didChangeConfiguration` (also sent as initializationOptions' settings). */
export function serverSettings(settings: ArgusSettings): ServerSettings {
  const target = normalizeTarget(settings.target);
  const registers = settings.registerHints !== false;
  return { argus: { arch: target, target, defines: normalizeDefines(settings.defines), inlayHints: { registers } } };
}

/** The same options as `argusc` flags, for display and logs: `--arch=sm_90 -D BM=64`. */
export function compilerFlags(settings: ArgusSettings): string[] {
  const s = serverSettings(settings).argus;
  const flags = s.arch ? [`--arch=${s.arch}`] : [];
  for (const [name, value] of Object.entries(s.defines)) flags.push("-D", `${name}=${value}`);
  return flags;
}
