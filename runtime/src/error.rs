//! The one error type every fallible operation returns.

use std::fmt;

/// An error from an operator or from the runtime. The message names the operator, the argument
/// and what is wrong, the way PyTorch's `TORCH_CHECK` messages do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// The operator (`"add.Tensor"`) or runtime function the error came from; empty if unknown.
    pub op: String,
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
    /// Anything else (runtime state, autograd …).
    Runtime,
}

impl Error {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error { op: String::new(), kind, message: message.into() }
    }
    /// Sets the operator name if none is set yet (the innermost op names the error).
    pub fn in_op(mut self, op: &str) -> Self {
        if self.op.is_empty() {
            self.op = op.to_string();
        }
        self
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
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.op.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.op, self.message)
        }
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
