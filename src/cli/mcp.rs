//! `selfdebug mcp`: the MCP server (see `crate::mcp`).

/// `after_help` of `selfdebug mcp`.
pub const EXIT_CODES: &str = "\
Exit codes of `mcp`:
  0  the client closed the connection (stdin); every run it started had ended or was
     interrupted and had restored its files
  6  the server could not start or the connection failed

Register it with an MCP client as the command `selfdebug` with the argument `mcp`
(see docs/agents.md). stdout carries only protocol messages; the runs' logs go to stderr.";

pub fn run() -> i32 {
    crate::mcp::serve()
}
