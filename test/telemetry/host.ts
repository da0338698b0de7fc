import { LocalHost } from '../../local/host';
import { functionModules } from '../support/host';

/** The local host with the app's functions on a free port, its log lines to `log`. */
export async function startHostWithLog(log: (line: string) => void): Promise<LocalHost> {
  return LocalHost.create({ port: 0, appModules: await functionModules(), log });
}
