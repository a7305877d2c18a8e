//! The analysis thread: it owns every interpreter the server makes (they are `Rc`-based, so
//! they stay on one thread, which has the interpreter's large stack) and turns each job, a
//! document's text at one version, into a [`Snapshot`] of plain data. Jobs queued for a
//! document that has a newer job waiting are skipped; a job whose interrupt flag is set stops
//! at its next evaluation step; a panic (a bug in TSL) is caught and reported as a log
//! message, and the thread goes on.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crossbeam_channel::{Receiver, Sender};

use super::Client;
use super::snapshot::Snapshot;
use crate::check::Input;
use crate::eval::{LogChannels, Options, limits};
use crate::source::Overlay;

/// One document to analyze.
pub struct Job {
    pub uri: String,
    pub version: i32,
    pub name: String,
    pub path: Option<PathBuf>,
    pub text: String,
    /// The open documents' text, read instead of the files on disk.
    pub overlay: Overlay,
    /// Set when a newer version makes this job's result useless.
    pub interrupt: Arc<AtomicBool>,
}

/// What the analysis thread sends back.
pub enum Done {
    Analyzed(Box<Snapshot>),
    /// Interrupted by a newer version or by closing the document: nothing to publish.
    Stopped,
    /// The analysis panicked (a bug in TSL).
    Panicked {
        uri: String,
        version: i32,
        message: String,
    },
}

/// Starts the analysis thread; it ends when `jobs` is closed.
pub fn spawn(
    client: Client,
    log: LogChannels,
    jobs: Receiver<Job>,
    done: Sender<Done>,
) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("tsl-analysis".to_string())
        .stack_size(limits::STACK_BYTES)
        .spawn(move || serve(client, log, &jobs, &done))
        .map(drop)
}

fn serve(client: Client, log: LogChannels, jobs: &Receiver<Job>, done: &Sender<Done>) {
    while let Ok(first) = jobs.recv() {
        let mut batch = vec![first];
        batch.extend(jobs.try_iter());
        for (index, job) in batch.iter().enumerate() {
            let newer = batch[index + 1..].iter().any(|later| later.uri == job.uri);
            if newer {
                continue;
            }
            if done.send(run(client, log, job)).is_err() {
                return;
            }
        }
    }
}

fn run(client: Client, log: LogChannels, job: &Job) -> Done {
    if job.interrupt.load(Ordering::Relaxed) {
        return Done::Stopped;
    }
    let caught = crate::diag::panic::catch(|| {
        let input = Input {
            name: job.name.clone(),
            path: job.path.clone(),
            text: job.text.clone(),
        };
        let options = Options {
            analysis: true,
            record_types: true,
            log,
            ..Options::default()
        };
        let analysis =
            crate::check::analyze(input, job.overlay.clone(), options, job.interrupt.clone());
        if analysis.interrupted {
            return None;
        }
        Some(Snapshot::build(
            client,
            &job.uri,
            job.version,
            &job.text,
            &analysis,
        ))
    });
    match caught {
        Ok(Some(snapshot)) => Done::Analyzed(Box::new(snapshot)),
        Ok(None) => Done::Stopped,
        Err(panic) => Done::Panicked {
            uri: job.uri.clone(),
            version: job.version,
            message: format!(
                "internal error while analysing {}: {}{}",
                job.name,
                panic.message,
                panic
                    .location
                    .map(|at| format!(" (at {at})"))
                    .unwrap_or_default()
            ),
        },
    }
}
