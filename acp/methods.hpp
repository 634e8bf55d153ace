#pragma once
// Every ACP method name, in one place (the MCP-over-ACP tunnel's included).
namespace acp::methods {
inline constexpr const char* kInitialize = "initialize";
inline constexpr const char* kAuthenticate = "authenticate";
inline constexpr const char* kLogout = "logout";
inline constexpr const char* kSessionNew = "session/new";
inline constexpr const char* kSessionLoad = "session/load";
inline constexpr const char* kSessionList = "session/list";
inline constexpr const char* kSessionResume = "session/resume";
inline constexpr const char* kSessionFork = "session/fork";  // unstable
inline constexpr const char* kSessionClose = "session/close";
inline constexpr const char* kSessionDelete = "session/delete";
inline constexpr const char* kSessionPrompt = "session/prompt";
inline constexpr const char* kSessionCancel = "session/cancel";
inline constexpr const char* kSessionSetMode = "session/set_mode";
inline constexpr const char* kSessionSetConfigOption = "session/set_config_option";
// Dropped from the schema in ACP 2.4.0; clients built on older SDKs still send it.
inline constexpr const char* kSessionSetModel = "session/set_model";
// Unstable: the session list's own methods, and the auth state.
inline constexpr const char* kSessionSetTitle = "session/set_title";
inline constexpr const char* kSessionArchive = "session/archive";
inline constexpr const char* kSessionUnarchive = "session/unarchive";
inline constexpr const char* kSessionStatus = "session/status";
// Taking back a message (issue 36; claude-agent-acp ships the first as a `_session` extension).
inline constexpr const char* kSessionRewind = "_session/rewind";
inline constexpr const char* kSessionRewindFiles = "_session/rewind_files";
inline constexpr const char* kAuthStatus = "auth/status";
inline constexpr const char* kCancelRequest = "$/cancel_request";
// Extension shared with codex-acp and claude-agent-acp: a message into the running turn.
inline constexpr const char* kSessionSteering = "_session/steering";

// Agent -> client.
inline constexpr const char* kSessionUpdate = "session/update";
inline constexpr const char* kAuthStatusUpdate = "auth/status_update";  // unstable
inline constexpr const char* kRequestPermission = "session/request_permission";
inline constexpr const char* kFsReadTextFile = "fs/read_text_file";
inline constexpr const char* kFsWriteTextFile = "fs/write_text_file";
inline constexpr const char* kTerminalCreate = "terminal/create";
inline constexpr const char* kTerminalOutput = "terminal/output";
inline constexpr const char* kTerminalWaitForExit = "terminal/wait_for_exit";
inline constexpr const char* kTerminalKill = "terminal/kill";
inline constexpr const char* kTerminalRelease = "terminal/release";
inline constexpr const char* kElicitationCreate = "elicitation/create";
inline constexpr const char* kElicitationComplete = "elicitation/complete";

// MCP over ACP (both directions): the editor's MCP servers, tunnelled through this connection.
inline constexpr const char* kMcpConnect = "mcp/connect";
inline constexpr const char* kMcpMessage = "mcp/message";
inline constexpr const char* kMcpDisconnect = "mcp/disconnect";
}  // namespace acp::methods
