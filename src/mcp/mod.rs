//! `selfdebug mcp`: a Model Context Protocol server over stdio, on the official Rust SDK
//! (rmcp). Each tool call runs this same binary as a child (`selfdebug CMD --json --root
//! ROOT ...`, see `child`), so a tool's structured result is exactly the command line's JSON
//! and every guarantee of the commands (the journal, the lock, restoring on SIGINT) holds
//! unchanged. The server itself touches no project file.

#![allow(deprecated)] // Logging and roots: deprecated by the SDK for a later spec; 2025-11-25 has them.

mod child;
mod notify;
mod oversized;
mod roots;
mod summary;
mod tools;

use std::borrow::Cow;
use std::sync::atomic::{AtomicU8, Ordering};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, LoggingLevel, LoggingMessageNotificationParam, PaginatedRequestParams,
    ProgressNotificationParam, ProtocolVersion, ServerCapabilities, ServerConfig,
    SetLevelRequestParams,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;

const INSTRUCTIONS: &str = "selfdebug repairs failing Python code with pytest as the judge. \
    Call `fix` with the project root: it is a dry run by default and returns proven patches as \
    unified diffs (`patches[].diff`) to apply with `git apply`, or call it with dry_run false \
    to keep them. `parse` reads a failing log, `probe` shows the values at the failing line, \
    `rules` lists the repair rules, `config` the settings, `restore` brings back the files of \
    a killed run.";

/// The newest specification served: the last with the `initialize` handshake, server-to-client
/// `roots/list` and `logging/setLevel`, which this server relies on (the SDK also knows a later
/// draft without them). Older ones are negotiated when a client asks for them.
const SPEC: ProtocolVersion = ProtocolVersion::V_2025_11_25;

struct Server {
    /// The lowest log level sent as `notifications/message` ([`notify::rank`]); `info` until
    /// the client sets one.
    level: AtomicU8,
}
/// A tool result that is an error: the one-line reason, and the JSON object when the command
/// printed one.
fn error_result(message: String, json: Option<Value>) -> CallToolResult {
    let mut r = CallToolResult::error(vec![ContentBlock::text(message)]);
    r.structured_content = json;
    r
}

/// What a call's result is made of, besides the child's outcome.
struct Shape<'a> {
    tool: &'a str,
    /// The command's "nothing to do" exit code (see `tools::Def`).
    nothing_to_do: Option<i32>,
    /// `fix`'s summary in place of the whole report.
    summary: bool,
}

/// The child's outcome as the tool's result: its JSON object (or `fix`'s summary of it) as the
/// structured content, a short human text of it as the text content; an error when it exited
/// nonzero or printed no object.
fn result(outcome: child::Outcome, shape: &Shape) -> CallToolResult {
    let nothing_to_do = shape.nothing_to_do;
    let json = serde_json::from_slice::<Value>(&outcome.stdout)
        .ok()
        .filter(Value::is_object);
    let text = json
        .as_ref()
        .map(|j| summary::text(shape.tool, j))
        .unwrap_or_default();
    let json = json.map(|j| if shape.summary { summary::fix(&j) } else { j });
    // "Nothing failed" is not an error of the call: a success that says so, as `fix`'s is.
    let ok = outcome.code == Some(0) || (outcome.code.is_some() && outcome.code == nothing_to_do);
    match (ok, json) {
        (true, Some(json)) => {
            let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
            r.structured_content = Some(json);
            r
        }
        (_, json) => {
            let how = match outcome.code {
                Some(c) => format!("exit code {c}"),
                None => "killed by a signal".to_string(),
            };
            let how = if outcome.interrupted {
                format!("cancelled, {how}")
            } else {
                how
            };
            let message = match (&json, outcome.last_error) {
                (Some(_), _) => text,
                (None, Some(line)) => format!("{line} ({how})"),
                (None, None) => format!("selfdebug printed no JSON ({how})"),
            };
            error_result(message, json)
        }
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_logging()
                .build(),
        )
        .with_protocol_version(SPEC)
        .with_server_info(Implementation::new("selfdebug", env!("CARGO_PKG_VERSION")))
        .with_instructions(INSTRUCTIONS)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&SPEC))
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.level
            .store(notify::rank(request.level), Ordering::Relaxed);
        Ok(())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools::list()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name == oversized::TOOL {
            let bytes = request
                .arguments
                .as_ref()
                .and_then(|a| a.get("bytes"))
                .and_then(Value::as_u64)
                .unwrap_or_default();
            return Err(ErrorData::invalid_params(
                format!(
                    "the message of {bytes} bytes is over the {} MiB a message may have: pass \
                     the log as a file with `log_file` (a path, relative to root) instead of its \
                     text in `log`",
                    oversized::LIMIT / (1024 * 1024) + 1
                ),
                None,
            ));
        }
        // A relative root: resolved against the client's roots, if it has any.
        let mut arguments = request.arguments.clone();
        if let Some(relative) = roots::relative(request.arguments.as_ref()) {
            let resolved = match roots::of_client(&context.peer).await {
                Ok(list) => roots::resolve(&request.name, relative, &list),
                Err(e) => Some(Err(e)),
            };
            match resolved {
                Some(Ok(path)) => {
                    arguments = request
                        .arguments
                        .as_ref()
                        .map(|a| roots::with_root(a, &path));
                }
                Some(Err(e)) => return Ok(error_result(e, None).into()),
                // No roots: `invocation` refuses the relative root.
                None => {}
            }
        }
        let inv = match tools::invocation(&request.name, arguments.as_ref()) {
            Ok(inv) => inv,
            // An unknown tool is a protocol error (-32602, as the specification's example).
            Err(e @ tools::ArgError::NoTool(_)) => {
                return Err(ErrorData::invalid_params(e.to_string(), None))
            }
            // Bad arguments are the model's to read and correct (the 2025-11-25 specification,
            // SEP-1303: input validation errors are tool execution errors): a tool error, no
            // child.
            Err(e) => return Ok(error_result(e.to_string(), None).into()),
        };
        let shape = Shape {
            tool: &request.name,
            nothing_to_do: inv.nothing_to_do,
            summary: inv.summary,
        };
        let spec = child::Spec {
            args: inv.args,
            cwd: inv.root,
            stdin: inv.stdin,
            progress: inv.progress,
        };
        let (progress, mut lines) = tokio::sync::mpsc::unbounded_channel::<String>();
        let (logs, mut log_lines) = tokio::sync::mpsc::unbounded_channel::<String>();
        // Each step the child reports, in order, as `notifications/progress` when the client
        // asked for them (sent one after the other, so `progress` only increases).
        let forward = async {
            let token = context.meta.get_progress_token();
            let mut steps = notify::Steps::default();
            while let Some(line) = lines.recv().await {
                let Some(token) = &token else { continue };
                let event: Value = serde_json::from_str(&line).unwrap_or_default();
                let (Some(ctx), Some(step)) = (event["context"].as_str(), event["step"].as_str())
                else {
                    continue;
                };
                let (message, value, total) = steps.next(ctx, step);
                let mut param =
                    ProgressNotificationParam::new(token.clone(), value).with_message(message);
                param.total = total;
                let _ = context.peer.notify_progress(param).await;
            }
        };
        // Each line of the child's stderr at or above the level the client set.
        let log = async {
            while let Some(line) = log_lines.recv().await {
                let Some((level, text)) = notify::log_line(&line) else {
                    continue;
                };
                if notify::rank(level) < self.level.load(Ordering::Relaxed) {
                    continue;
                }
                let mut param = LoggingMessageNotificationParam::new(level, Value::String(text));
                param.logger = Some(format!("selfdebug {}", request.name));
                let _ = context.peer.notify_logging_message(param).await;
            }
        };
        let run = child::run(spec, context.ct.clone(), progress, logs);
        let (outcome, (), ()) = tokio::join!(run, forward, log);
        match outcome {
            Ok(outcome) => Ok(result(outcome, &shape).into()),
            Err(e) => Ok(error_result(format!("cannot run selfdebug: {e}"), None).into()),
        }
    }
}

/// The server's stdin, which interrupts every child the moment it ends: the SDK lets running
/// calls finish for a few seconds after EOF before it cancels them, and a client may kill the
/// server (and its children, mid-edit) sooner; SIGINT starts each child's restore at once.
struct EofInterrupts<R>(R);

impl<R: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for EofInterrupts<R> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = std::pin::Pin::new(&mut self.0).poll_read(cx, buf);
        if let std::task::Poll::Ready(Ok(())) = polled {
            if buf.filled().len() == before && buf.remaining() > 0 {
                child::interrupt_all();
            }
        }
        polled
    }
}

/// SIGTERM, SIGINT or SIGHUP to the server ends it as a closed stdin does: every run still
/// going is interrupted, each restores its files, and the server exits 0 once all have ended.
/// The signal only raises a flag (async-signal-safe); this thread acts on it.
fn stop_on_signal() {
    crate::process::install_interrupt_handler();
    std::thread::spawn(|| {
        while !crate::process::interrupted() {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        child::interrupt_all_and_wait();
        std::process::exit(crate::exit::OK);
    });
}

/// Serves MCP on stdin/stdout until the client closes stdin (or a signal asks it to stop, see
/// [`stop_on_signal`]); then every run still going is interrupted (each restores its files) and
/// waited for. Returns the exit code.
pub fn serve() -> i32 {
    stop_on_signal();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            crate::stdio::errln(&format!(
                "selfdebug: error: cannot start the MCP server: {e}"
            ));
            return crate::exit::ENVIRONMENT;
        }
    };
    let served = runtime.block_on(async {
        let (stdin, stdout) = rmcp::transport::stdio();
        let server = Server {
            level: AtomicU8::new(notify::rank(LoggingLevel::Info)),
        };
        let service = server
            .serve((EofInterrupts(oversized::Oversized::new(stdin)), stdout))
            .await?;
        service.waiting().await?;
        Ok::<(), Box<dyn std::error::Error>>(())
    });
    // A handler still waiting for its child is dropped with the runtime; its child is not.
    runtime.shutdown_background();
    child::interrupt_all_and_wait();
    match served {
        Ok(()) => crate::exit::OK,
        Err(e) => {
            crate::stdio::errln(&format!("selfdebug: error: MCP server: {e}"));
            crate::exit::ENVIRONMENT
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{child::Outcome, result, Shape};
    use serde_json::json;

    fn outcome(code: Option<i32>, stdout: &str, last_error: Option<&str>) -> Outcome {
        Outcome {
            code,
            stdout: stdout.as_bytes().to_vec(),
            last_error: last_error.map(str::to_string),
            interrupted: false,
        }
    }

    const RULES: Shape = Shape {
        tool: "rules",
        nothing_to_do: None,
        summary: false,
    };

    fn text(r: &rmcp::model::CallToolResult) -> String {
        r.content[0].as_text().unwrap().text.clone()
    }

    #[test]
    fn exit_codes_and_json_make_the_result() {
        // 0 and an object: a success whose structured content is that object, and whose text
        // is a short summary of it.
        let r = result(outcome(Some(0), "{\"rules\": [1]}\n", None), &RULES);
        assert_eq!(r.is_error, Some(false));
        assert_eq!(r.structured_content, Some(json!({"rules": [1]})));
        assert_eq!(text(&r), "1 rule in force");
        // Nonzero and an object (the lock's error): an error that keeps the object.
        let r = result(
            outcome(Some(6), "{\"error\": \"locked\"}", Some("x")),
            &RULES,
        );
        assert_eq!(r.is_error, Some(true));
        assert_eq!(r.structured_content, Some(json!({"error": "locked"})));
        assert_eq!(text(&r), "locked");
        // No object: the command's one-line error and how it ended.
        let r = result(
            outcome(Some(2), "", Some("selfdebug: error: bad log")),
            &RULES,
        );
        assert_eq!(r.is_error, Some(true));
        assert_eq!(r.structured_content, None);
        assert_eq!(text(&r), "selfdebug: error: bad log (exit code 2)");
        let r = result(outcome(Some(0), "[1]", None), &RULES);
        assert_eq!(r.is_error, Some(true));
        assert_eq!(text(&r), "selfdebug printed no JSON (exit code 0)");
        let mut cancelled = outcome(None, "", None);
        cancelled.interrupted = true;
        assert_eq!(
            text(&result(cancelled, &RULES)),
            "selfdebug printed no JSON (cancelled, killed by a signal)"
        );
        // The command's "nothing failed" code is a success that keeps its object.
        let nothing = || outcome(Some(1), "{\"failures\": []}", None);
        let parse = Shape {
            tool: "parse",
            nothing_to_do: Some(1),
            summary: false,
        };
        let r = result(nothing(), &parse);
        assert_eq!(r.is_error, Some(false));
        assert_eq!(text(&r), "0 failures\n");
        assert_eq!(result(nothing(), &RULES).is_error, Some(true));
    }
}
