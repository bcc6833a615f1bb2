//! The one error type every fallible operation returns.

use std::fmt;

/// An error from an operator or from the runtime. The message names the operator, the argument
/// and what is wrong, the way PyTorch's `TORCH_CHECK` messages do.
///
/// `Debug` shows the kind and the message (`ValueError: linear: …`), so that `fn main() ->
/// Result<()>` and `unwrap` print a readable error rather than the struct's fields.
#[derive(Clone, PartialEq, Eq)]
pub struct Error {
    /// The operator the user called (`"linear"`), or the runtime function the error came from;
    /// empty if unknown.
    pub op: String,
    /// The operators, innermost first, that `op` called on the way to the one that raised the
    /// error (`["mm"]` when `linear` fails inside `mm`); empty when `op` raised it.
    pub inner: Vec<String>,
    /// The kind of error.
    pub kind: ErrorKind,
    /// A sentence saying what is wrong.
    pub message: String,
}

/// What class of mistake an [`Error`] reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// Shapes cannot be broadcast, a view is impossible, sizes disagree.
    Shape,
    /// A dtype is unsupported or an unsafe cast was requested.
    DType,
    /// Tensors on different devices, or an unsupported device.
    Device,
    /// A dimension index is out of range.
    Index,
    /// No kernel is registered for the operator at the selected dispatch key.
    NotImplemented,
    /// An argument value is invalid.
    Value,
    /// Memory overlap makes the operation unsafe.
    Overlap,
    /// An allocation was refused (PyTorch's `OutOfMemoryError`).
    OutOfMemory,
    /// Anything else (runtime state, autograd …).
    Runtime,
}

impl Error {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error { op: String::new(), inner: Vec::new(), kind, message: message.into() }
    }
    /// Records that the error passed through operator `op` on its way out: every operator's
    /// entry point calls this, so the outermost one (the operator the user called) ends up in
    /// [`op`](Self::op) and the ones it called in [`inner`](Self::inner).
    pub fn in_op(mut self, op: &str) -> Self {
        let op = op.strip_prefix("aten::").unwrap_or(op);
        if self.op.is_empty() {
            self.op = op.to_string();
        } else if self.op != op {
            let inner = std::mem::replace(&mut self.op, op.to_string());
            self.inner.push(inner);
        }
        self
    }
    /// The operator that raised the error: the innermost of [`inner`](Self::inner), else
    /// [`op`](Self::op).
    pub fn origin(&self) -> &str {
        self.inner.first().unwrap_or(&self.op)
    }
    pub fn shape(m: impl Into<String>) -> Self {
        Self::new(ErrorKind::Shape, m)
    }
    pub fn dtype(m: impl Into<String>) -> Self {
        Self::new(ErrorKind::DType, m)
    }
    pub fn device(m: impl Into<String>) -> Self {
        Self::new(ErrorKind::Device, m)
    }
    pub fn index(m: impl Into<String>) -> Self {
        Self::new(ErrorKind::Index, m)
    }
    pub fn value(m: impl Into<String>) -> Self {
        Self::new(ErrorKind::Value, m)
    }
    pub fn overlap(m: impl Into<String>) -> Self {
        Self::new(ErrorKind::Overlap, m)
    }
    pub fn runtime(m: impl Into<String>) -> Self {
        Self::new(ErrorKind::Runtime, m)
    }
    /// An allocation of `nbytes` bytes of `what` was refused.
    pub fn out_of_memory(nbytes: u128, what: &str) -> Self {
        Self::new(ErrorKind::OutOfMemory, format!("out of memory: tried to allocate {nbytes} bytes of {what}"))
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}Error: {self}", self.kind)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `linear: matmul: mm: mat1 and mat2 shapes cannot be multiplied …`: the operator called
        // first, then each operator on the way to the one that raised the error.
        if !self.op.is_empty() {
            write!(f, "{}: ", self.op)?;
        }
        for inner in self.inner.iter().rev() {
            write!(f, "{inner}: ")?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// `Result` with oxten's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Returns early with an error of the given kind when the condition is false.
#[macro_export]
macro_rules! ensure {
    ($cond:expr, $kind:ident, $($fmt:tt)+) => {
        if !$cond {
            return Err($crate::Error::new($crate::ErrorKind::$kind, format!($($fmt)+)));
        }
    };
}

/// `Vec::with_capacity(n)` that returns oxten's out-of-memory error instead of aborting the
/// process when the memory is not there (or `n` elements overflow the address space).
pub fn try_vec_with_capacity<T>(n: usize) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| Error::out_of_memory(n as u128 * std::mem::size_of::<T>() as u128, "host memory"))?;
    Ok(v)
}
