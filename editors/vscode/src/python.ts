// The interpreter selected in the Python extension (ms-python.python), when it is installed.
import * as vscode from "vscode";

interface EnvironmentPath {
  readonly path: string;
}

interface ResolvedEnvironment {
  readonly executable?: { readonly uri?: vscode.Uri };
}

interface PythonExtensionApi {
  readonly environments?: {
    getActiveEnvironmentPath(resource?: vscode.Uri): EnvironmentPath;
    resolveEnvironment(env: EnvironmentPath): Promise<ResolvedEnvironment | undefined>;
  };
}

const PYTHON_EXTENSION = "ms-python.python";

export async function pythonInterpreter(
  resource: vscode.Uri | undefined,
  log: vscode.LogOutputChannel,
): Promise<string | undefined> {
  const extension = vscode.extensions.getExtension<PythonExtensionApi>(PYTHON_EXTENSION);
  if (extension === undefined) {
    return undefined;
  }
  try {
    const api = extension.isActive ? extension.exports : await extension.activate();
    const environments = api.environments;
    if (environments === undefined) {
      return undefined;
    }
    const active = environments.getActiveEnvironmentPath(resource);
    const resolved = await environments.resolveEnvironment(active);
    return resolved?.executable?.uri?.fsPath ?? active.path;
  } catch (error) {
    log.warn(`could not ask the Python extension for its interpreter: ${String(error)}`);
    return undefined;
  }
}
