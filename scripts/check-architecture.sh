#!/bin/sh
# The grep rules of docs/ARCHITECTURE.md ("Rules the build checks"), run by CTest as
# `architecture_rules`. Usage: scripts/check-architecture.sh [SOURCE_ROOT]   (default: .)
# Prints each broken rule with file:line and exits 1; exits 0 when all hold.
#  1. Floors: support <- acp <- bridge <- runtime <- app; a file includes only its floor and those below.
#  2. Inside runtime/: protocol, config <- the middle folders <- agent <- server (no include upwards).
#  3. Of runtime/, only runtime/server/ includes acp/ headers.
#  4. Only runtime/server/ spells "sessionUpdate" (session_updates.cpp is the encoder).
#  5. ACP method names with a '/' are spelled only in acp/methods.hpp (the rest use acp::methods).
# A known exception is listed in ALLOWED with the reason in ARCHITECTURE.md; remove it with the fix.
set -u
cd "${1:-.}" || exit 2

# "file|included header or method literal" pairs known and documented in docs/ARCHITECTURE.md.
ALLOWED='runtime/tools/tool_results.cpp|runtime/agent/containment.hpp
acp/http_stream_transport.cpp|"session/cancel"
acp/http_stream_transport.cpp|"session/close"
acp/http_stream_transport.cpp|"session/delete"
acp/http_stream_transport.cpp|"session/fork"
acp/http_stream_transport.cpp|"session/load"
acp/http_stream_transport.cpp|"session/prompt"
acp/http_stream_transport.cpp|"session/resume"
acp/http_stream_transport.cpp|"session/set_config_option"
acp/http_stream_transport.cpp|"session/set_mode"
acp/http_stream_transport.cpp|"session/set_model"'

[ -f acp/methods.hpp ] || { echo "architecture rules: no acp/methods.hpp under $(pwd)"; exit 2; }
# The names acp/methods.hpp defines (those with a '/': one-word names are also JSON keys).
names=$(grep -oE '= "[^"]*/[^"]*";' acp/methods.hpp | sed -E 's/^= "(.*)";$/\1/' | tr '\n' ' ')
[ -n "$names" ] || { echo "architecture rules: acp/methods.hpp defines no method names (update this script)"; exit 2; }

find support acp bridge runtime app \( -name '*.cpp' -o -name '*.hpp' \) 2>/dev/null | sort |
  xargs awk -v allowed="$ALLOWED" -v names="$names" '
function rank(p) {
  if (p ~ /^support\//) return 0
  if (p ~ /^acp\//) return 1
  if (p ~ /^bridge\//) return 2
  if (p ~ /^runtime\/(protocol|config)\//) return 3
  if (p ~ /^runtime\/agent\//) return 5
  if (p ~ /^runtime\/server\//) return 6
  if (p ~ /^runtime\//) return 4   # providers, hooks, engine, sessions, tools, mcp, executors, builtin_skills
  if (p ~ /^app\//) return 7
  return -1
}
function broken(msg) { printf "architecture rule broken: %s:%d %s\n", FILENAME, FNR, msg; failed = 1 }
BEGIN {
  n = split(allowed, rows, "\n"); for (i = 1; i <= n; i++) ok[rows[i]] = 1
  m = split(names, method, " ")
}
FNR == 1 { from = rank(FILENAME); server = FILENAME ~ /^runtime\/server\//; methods_file = FILENAME == "acp/methods.hpp" }
{
  line = $0
  sub(/^[ \t]*\/\/.*$/, "", line); sub(/[ \t]\/\/.*$/, "", line)   # a comment may name anything
}
line ~ /^[ \t]*#include "(support|acp|bridge|runtime|app)\// {
  header = line; sub(/^[^"]*"/, "", header); sub(/".*$/, "", header)
  if (rank(header) > from && !((FILENAME "|" header) in ok))
    broken("includes " header ", a floor above it (docs/ARCHITECTURE.md, Floors)")
  if (FILENAME ~ /^runtime\// && !server && header ~ /^acp\//)
    broken("includes " header ": of runtime/, only runtime/server/ includes acp/ headers")
}
!server && index(line, "\"sessionUpdate\"") {
  broken("spells \"sessionUpdate\": only runtime/server/ encodes session/update")
}
!methods_file {
  for (i = 1; i <= m; i++) {
    lit = "\"" method[i] "\""
    if (!index(line, lit)) continue
    if (FILENAME ~ /^bridge\/mcp\// && method[i] ~ /^elicitation\//) continue  # MCP has a method of that name
    if ((FILENAME "|" lit) in ok) continue
    broken("spells the method " lit ": use acp::methods (acp/methods.hpp)")
  }
}
END { exit failed }
' || failed=1

# A listed exception that no longer occurs: say so, so that the list (and ARCHITECTURE.md) shrinks.
printf '%s\n' "$ALLOWED" | while IFS='|' read -r file what; do
  [ -f "$file" ] && grep -qF "$what" "$file" && continue
  echo "note: the allowed exception '$file | $what' no longer occurs: remove it from $0 and docs/ARCHITECTURE.md" >&2
done

[ "${failed:-0}" -eq 0 ] && echo "architecture rules hold"
exit "${failed:-0}"
