//! Operator tracing for selective builds: with `OXTEN_TRACE_OPS=<path>` in the environment, the
//! first call of each operator (nested calls included: composites, formulas, casts) appends
//! `- <operator>` to that file, which is then an allowlist for `OXTEN_SELECTED_OPS`.

use super::op::OperatorEntry;
use std::io::Write;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Mutex;

/// 0: not yet decided, 1: off, 2: on.
static STATE: AtomicU8 = AtomicU8::new(0);
static FILE: Mutex<Option<std::fs::File>> = Mutex::new(None);

/// Records `op` if tracing is on and this is its first call. Costs one relaxed load when off.
#[inline]
pub(crate) fn record(op: &OperatorEntry) {
    match STATE.load(Ordering::Relaxed) {
        1 => {}
        2 => {
            if !op.mark_traced() {
                write(op.name());
            }
        }
        _ => {
            start();
            record(op);
        }
    }
}

/// Reads `OXTEN_TRACE_OPS` once and opens the file (truncated, with a header).
#[cold]
fn start() {
    let mut file = FILE.lock().unwrap_or_else(|e| e.into_inner());
    if STATE.load(Ordering::Acquire) != 0 {
        return;
    }
    let opened = std::env::var_os("OXTEN_TRACE_OPS").and_then(|path| {
        let mut f = std::fs::File::create(&path)
            .map_err(|e| eprintln!("oxten: OXTEN_TRACE_OPS: cannot write {}: {e}", path.to_string_lossy()))
            .ok()?;
        let _ = writeln!(f, "# Operators this program called (OXTEN_TRACE_OPS); an allowlist for OXTEN_SELECTED_OPS.");
        Some(f)
    });
    let on = opened.is_some();
    *file = opened;
    STATE.store(if on { 2 } else { 1 }, Ordering::Release);
}

#[cold]
fn write(name: &str) {
    // Operators of downstream libraries (`myops::…`) are not in oxten's YAML: not listed.
    let Some(op) = name.strip_prefix("aten::") else { return };
    if let Some(f) = FILE.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
        let _ = writeln!(f, "- {op}");
    }
}
