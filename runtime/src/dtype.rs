//! Element types (`ScalarType` in PyTorch) and the type-promotion lattice.

use std::fmt;

pub use half::{bf16, f16};

/// The element type of a tensor.
///
/// The order of the variants is the order of PyTorch's `ScalarType` enum for the types oxten
/// supports; promotion works on categories, not on this order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    U8,
    I8,
    I16,
    I32,
    I64,
    F16,
    F32,
    F64,
    Bool,
    BF16,
}

/// The four promotion categories, lowest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Category {
    Bool,
    Integral,
    Floating,
    Complex,
}

impl DType {
    /// Every supported dtype.
    pub const ALL: [DType; 10] = [
        DType::Bool,
        DType::U8,
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::F16,
        DType::BF16,
        DType::F32,
        DType::F64,
    ];
    /// The floating dtypes.
    pub const FLOATING: [DType; 4] = [DType::F16, DType::BF16, DType::F32, DType::F64];

    /// Size of one element in bytes.
    pub const fn size(self) -> usize {
        match self {
            DType::Bool | DType::U8 | DType::I8 => 1,
            DType::I16 | DType::F16 | DType::BF16 => 2,
            DType::I32 | DType::F32 => 4,
            DType::I64 | DType::F64 => 8,
        }
    }

    pub const fn is_floating_point(self) -> bool {
        matches!(self, DType::F16 | DType::BF16 | DType::F32 | DType::F64)
    }

    pub const fn is_integral(self, include_bool: bool) -> bool {
        match self {
            DType::Bool => include_bool,
            DType::U8 | DType::I8 | DType::I16 | DType::I32 | DType::I64 => true,
            _ => false,
        }
    }

    pub const fn is_reduced_float(self) -> bool {
        matches!(self, DType::F16 | DType::BF16)
    }

    pub const fn category(self) -> Category {
        match self {
            DType::Bool => Category::Bool,
            DType::U8 | DType::I8 | DType::I16 | DType::I32 | DType::I64 => Category::Integral,
            _ => Category::Floating,
        }
    }

    /// The type arithmetic on this dtype is carried out in (`opmath_type`): f32 for f16/bf16.
    pub const fn opmath(self) -> DType {
        match self {
            DType::F16 | DType::BF16 => DType::F32,
            d => d,
        }
    }

    /// The accumulation type of reductions on CPU (`sum` uses f32 for f16/bf16/f32, i64 for
    /// integers, as PyTorch's CPU sum does).
    pub const fn acc_type(self) -> DType {
        match self {
            DType::F16 | DType::BF16 | DType::F32 => DType::F32,
            DType::F64 => DType::F64,
            _ => DType::I64,
        }
    }

    /// The PyTorch name of the dtype, e.g. `torch.float32` → `"float32"`.
    pub const fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::U8 => "uint8",
            DType::I8 => "int8",
            DType::I16 => "int16",
            DType::I32 => "int32",
            DType::I64 => "int64",
            DType::F16 => "float16",
            DType::BF16 => "bfloat16",
            DType::F32 => "float32",
            DType::F64 => "float64",
        }
    }

    /// Parses a PyTorch dtype name (`"float32"`, `"float"`, `"half"`, `"long"` …).
    pub fn from_name(s: &str) -> Option<DType> {
        Some(match s {
            "bool" => DType::Bool,
            "uint8" => DType::U8,
            "int8" => DType::I8,
            "int16" | "short" => DType::I16,
            "int32" | "int" => DType::I32,
            "int64" | "long" => DType::I64,
            "float16" | "half" => DType::F16,
            "bfloat16" => DType::BF16,
            "float32" | "float" => DType::F32,
            "float64" | "double" => DType::F64,
            _ => return None,
        })
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `torch.promote_types`: the smallest dtype both `a` and `b` convert to without leaving their
/// category. Mirrors PyTorch's promotion table (u8 with i8 gives i16; f16 with bf16 gives f32).
pub fn promote_types(a: DType, b: DType) -> DType {
    use DType::*;
    if a == b {
        return a;
    }
    let (ca, cb) = (a.category(), b.category());
    if ca != cb {
        // The higher category wins; bool joins anything.
        return if ca > cb { a } else { b };
    }
    match ca {
        Category::Integral => {
            let rank = |d: DType| match d {
                I8 => 1,
                I16 => 2,
                I32 => 3,
                I64 => 4,
                _ => 0,
            };
            match (a, b) {
                (U8, I8) | (I8, U8) => I16,
                (U8, s) | (s, U8) => s,
                _ => {
                    if rank(a) > rank(b) {
                        a
                    } else {
                        b
                    }
                }
            }
        }
        Category::Floating => match (a, b) {
            (F16, BF16) | (BF16, F16) => F32,
            (F64, _) | (_, F64) => F64,
            (F32, _) | (_, F32) => F32,
            _ => unreachable!("equal reduced floats handled above"),
        },
        _ => a,
    }
}

/// `torch.can_cast(from, to)`: false when the cast would lower the category (float → int,
/// int → bool …), the check applied to `out=` arguments and in-place results.
pub fn can_cast(from: DType, to: DType) -> bool {
    from.category() <= to.category()
}

/// The default floating dtype (`torch.get_default_dtype()`).
pub const DEFAULT_FLOAT: DType = DType::F32;

#[cfg(test)]
mod tests {
    use super::*;
    use DType::*;

    #[test]
    fn promotion_matches_pytorch_table() {
        // Values from torch.promote_types.
        let cases = [
            (U8, I8, I16),
            (U8, I32, I32),
            (I8, I64, I64),
            (Bool, U8, U8),
            (Bool, F16, F16),
            (I64, F16, F16),
            (F16, BF16, F32),
            (BF16, F32, F32),
            (F32, F64, F64),
            (I32, BF16, BF16),
            (Bool, Bool, Bool),
        ];
        for (a, b, want) in cases {
            assert_eq!(promote_types(a, b), want, "{a} + {b}");
            assert_eq!(promote_types(b, a), want, "{b} + {a}");
        }
    }

    #[test]
    fn can_cast_follows_categories() {
        assert!(can_cast(I64, F16));
        assert!(!can_cast(F32, I64));
        assert!(!can_cast(I32, Bool));
        assert!(can_cast(Bool, U8));
        assert!(can_cast(F64, F16));
    }
}
