//! The process's own stdin and stdout, for [`super::serve_std`]. When they
//! are pipes (a client that started this server holds the other ends),
//! they are read and written through the runtime's reactor, on the thread
//! serving them; otherwise (a file, a terminal, a socket) through tokio's
//! stdin and stdout, which hand every read and every write to a blocking
//! thread of their own — for pipes, that hand-over cost about five context
//! switches per call. The pipes are put in non-blocking mode, which a
//! process sharing the same end would see too; for a stdio MCP server no
//! other process may read its stdin or write its stdout anyway (every line
//! there is a message).

use tokio::io::{AsyncRead, AsyncWrite, BufWriter};

/// Standard input: the pipe, read when the reactor says it is readable; or
/// tokio's stdin.
pub(super) fn input() -> Box<dyn AsyncRead + Unpin> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        let fd = std::io::stdin().as_fd().try_clone_to_owned();
        // Not a pipe (or not readable): left as it is, read the blocking way.
        if let Some(pipe) = fd.ok().and_then(|fd| tokio::net::unix::pipe::Receiver::from_owned_fd(fd).ok()) {
            return Box::new(pipe);
        }
    }
    Box::new(tokio::io::stdin())
}

/// Standard output: the pipe behind a buffer (a line and its newline, and
/// the lines of a burst, leave in one write at the writer's flush); or
/// tokio's stdout.
pub(super) fn output() -> Box<dyn AsyncWrite + Unpin> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        let fd = std::io::stdout().as_fd().try_clone_to_owned();
        if let Some(pipe) = fd.ok().and_then(|fd| tokio::net::unix::pipe::Sender::from_owned_fd(fd).ok()) {
            return Box::new(BufWriter::new(pipe));
        }
    }
    Box::new(tokio::io::stdout())
}
