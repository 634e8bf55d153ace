// What the user can do about a failed turn, added to the error the chat shows. No `vscode` import.

/**
 * The server's error for a model it cannot reach names the URL only: say where that URL is set
 * (the config file, or another config folder through the `openvaala.env` setting). A message that
 * names a config.yaml already (a newer server) gets only the editor's part.
 */
export function turnErrorText(message: string, configFile: string): string {
  if (!message.includes("cannot reach the model at ")) return message;
  const file = message.includes("config.yaml") ? "" : ` Its address is the provider's base_url in ${configFile} (OpenVaala: Open Config Folder).`;
  return `${message}. Is the model server running?${file} To use another config folder, set OPENVAALA_CONFIG_DIR in the "openvaala.env" setting.`;
}
