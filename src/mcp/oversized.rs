//! Messages too large to take. The SDK's stdio transport drops a line over 16 MiB without a
//! word, and a client that pasted a huge log then waits forever for its answer. This reader sits
//! under the transport: a line over [`LIMIT`] never reaches it; in its place goes a small
//! `tools/call` of [`TOOL`] with the same `id` (read from the line's start), which the server
//! answers with an error saying to pass the log as a file (`log_file`). A line whose `id`
//! cannot be read (a notification) is dropped, and said on stderr.

use std::pin::Pin;
use std::sync::LazyLock;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};

/// The longest line passed on: under the SDK's own 16 MiB, so that none is dropped there.
pub const LIMIT: usize = 16 * 1024 * 1024 - 64 * 1024;

/// The tool name a replaced message calls (no real tool has a `/`).
pub const TOOL: &str = "selfdebug/oversized";

/// How much of an oversized line's start is kept to find its `id`.
const HEAD: usize = 64 * 1024;

/// The JSON-RPC `id` near a message's start: a number or a string.
static ID: LazyLock<regex::bytes::Regex> = LazyLock::new(|| {
    regex::bytes::Regex::new(r#""id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")"#).expect("a valid regex")
});

/// An oversized line being skipped: its start and its length so far.
struct Skipping {
    head: Vec<u8>,
    len: usize,
}

/// Passes whole lines of `inner` on, each line over `limit` replaced (see the module docs).
pub struct Oversized<R> {
    inner: R,
    limit: usize,
    /// The line being read (not yet passed on).
    line: Vec<u8>,
    skipping: Option<Skipping>,
    /// Whole lines ready to be read, from `pos`.
    out: Vec<u8>,
    pos: usize,
    eof: bool,
}

impl<R> Oversized<R> {
    pub fn new(inner: R) -> Oversized<R> {
        Oversized::with_limit(inner, LIMIT)
    }

    pub fn with_limit(inner: R, limit: usize) -> Oversized<R> {
        Oversized {
            inner,
            limit,
            line: Vec::new(),
            skipping: None,
            out: Vec::new(),
            pos: 0,
            eof: false,
        }
    }

    fn feed(&mut self, bytes: &[u8]) {
        for chunk in bytes.split_inclusive(|b| *b == b'\n') {
            let ends = chunk.last() == Some(&b'\n');
            if let Some(s) = self.skipping.as_mut() {
                s.len += chunk.len();
            } else {
                self.line.extend_from_slice(chunk);
                if self.line.len() > self.limit {
                    let head = self.line[..HEAD.min(self.line.len())].to_vec();
                    self.skipping = Some(Skipping {
                        head,
                        len: self.line.len(),
                    });
                    self.line = Vec::new();
                }
            }
            if !ends {
                continue;
            }
            match self.skipping.take() {
                Some(s) => self.out.extend(replacement(&s)),
                None => self.out.append(&mut self.line),
            }
        }
    }
}

/// The small call that stands for an oversized message, or nothing when it has no `id`.
fn replacement(s: &Skipping) -> Vec<u8> {
    let Some(id) = ID.captures(&s.head).and_then(|c| c.get(1)) else {
        crate::stdio::errln(&format!(
            "selfdebug mcp: a message of {} bytes (over {} MiB) without an id was dropped",
            s.len,
            LIMIT / (1024 * 1024) + 1
        ));
        return Vec::new();
    };
    let id = String::from_utf8_lossy(id.as_bytes());
    format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"{TOOL}\",\"arguments\":{{\"bytes\":{}}}}}}}\n",
        s.len
    )
    .into_bytes()
}

impl<R: AsyncRead + Unpin> AsyncRead for Oversized<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        loop {
            if this.pos < this.out.len() {
                let n = buf.remaining().min(this.out.len() - this.pos);
                buf.put_slice(&this.out[this.pos..this.pos + n]);
                this.pos += n;
                if this.pos == this.out.len() {
                    this.out.clear();
                    this.pos = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if this.eof {
                // A last line without a newline goes on as it is (the transport decides).
                if this.line.is_empty() {
                    return Poll::Ready(Ok(()));
                }
                this.out = std::mem::take(&mut this.line);
                continue;
            }
            let mut tmp = [0u8; 64 * 1024];
            let mut read = ReadBuf::new(&mut tmp);
            match Pin::new(&mut this.inner).poll_read(cx, &mut read) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Ready(Ok(())) if read.filled().is_empty() => this.eof = true,
                Poll::Ready(Ok(())) => this.feed(read.filled()),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    fn through(input: &[u8], limit: usize) -> Vec<u8> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(async {
            let mut out = Vec::new();
            Oversized::with_limit(input, limit)
                .read_to_end(&mut out)
                .await
                .unwrap();
            out
        })
    }

    #[test]
    fn short_lines_pass_unchanged_and_a_long_one_becomes_the_call_with_its_id() {
        let long = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{{\"log\":\"{}\"}}}}\n",
            "x".repeat(200)
        );
        let input = format!("{{\"a\":1}}\n{long}{{\"b\":2}}\nlast");
        let out = through(input.as_bytes(), 100);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            format!(
                "{{\"a\":1}}\n{{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":\
                 {{\"name\":\"selfdebug/oversized\",\"arguments\":{{\"bytes\":{}}}}}}}\n{{\"b\":2}}\nlast",
                long.len()
            )
        );
    }

    #[test]
    fn a_string_id_is_kept_and_a_line_without_one_is_dropped() {
        let long = format!("{{\"id\":\"a\\\"b\",\"x\":\"{}\"}}\n", "y".repeat(50));
        let out = String::from_utf8(through(long.as_bytes(), 20)).unwrap();
        assert!(
            out.starts_with("{\"jsonrpc\":\"2.0\",\"id\":\"a\\\"b\","),
            "{out}"
        );
        let no_id = format!(
            "{{\"method\":\"notifications/x\",\"x\":\"{}\"}}\nok\n",
            "z".repeat(50)
        );
        assert_eq!(through(no_id.as_bytes(), 20), b"ok\n");
    }
}
