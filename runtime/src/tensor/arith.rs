//! Rust's arithmetic operators on tensors: `&a + &b`, `&a * 2.0`, `2.0 * &a`, `-&a`, `a += &b`.
//!
//! Each is the operator's panicking form (`add`, `mul_scalar`, `add_` …), with the same type
//! promotion and broadcasting, and the same panic message as calling it by name (use the `try_`
//! forms to get the error instead). Numbers are `f64` and `i64` (one type per kind, so that
//! literals need no suffix) and act as wrapped scalars, as Python numbers do in PyTorch
//! (`int_tensor * 2.5` is float32). The assigning forms are the in-place operators,
//! so they write into the storage every handle of the tensor shares, as `+=` does in PyTorch.
//! `number / tensor` is not provided: use [`Tensor::div`].

use super::Tensor;
use std::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Sub, SubAssign};

/// `$Trait` for every pair of owned and borrowed tensors, and for tensors with numbers.
macro_rules! binary {
    ($Trait:ident, $method:ident, $tensor_op:ident, $scalar_op:ident) => {
        impl $Trait<&Tensor> for &Tensor {
            type Output = Tensor;
            #[track_caller]
            fn $method(self, rhs: &Tensor) -> Tensor {
                self.$tensor_op(rhs)
            }
        }
        impl $Trait<Tensor> for &Tensor {
            type Output = Tensor;
            #[track_caller]
            fn $method(self, rhs: Tensor) -> Tensor {
                self.$tensor_op(&rhs)
            }
        }
        impl $Trait<&Tensor> for Tensor {
            type Output = Tensor;
            #[track_caller]
            fn $method(self, rhs: &Tensor) -> Tensor {
                (&self).$tensor_op(rhs)
            }
        }
        impl $Trait<Tensor> for Tensor {
            type Output = Tensor;
            #[track_caller]
            fn $method(self, rhs: Tensor) -> Tensor {
                (&self).$tensor_op(&rhs)
            }
        }
        binary!(@numbers $Trait, $method, $scalar_op, f64, i64);
    };
    (@numbers $Trait:ident, $method:ident, $scalar_op:ident, $($n:ty),*) => {$(
        impl $Trait<$n> for &Tensor {
            type Output = Tensor;
            #[track_caller]
            fn $method(self, rhs: $n) -> Tensor {
                self.$scalar_op(rhs)
            }
        }
        impl $Trait<$n> for Tensor {
            type Output = Tensor;
            #[track_caller]
            fn $method(self, rhs: $n) -> Tensor {
                (&self).$scalar_op(rhs)
            }
        }
    )*};
}

binary!(Add, add, add, add_scalar);
binary!(Sub, sub, sub, sub_scalar);
binary!(Mul, mul, mul, mul_scalar);
binary!(Div, div, div, div_scalar);

/// `number + tensor`, `number * tensor` (commutative) and `number - tensor` (`-tensor + number`).
macro_rules! number_lhs {
    ($($n:ty),*) => {$(
        impl Add<&Tensor> for $n {
            type Output = Tensor;
            #[track_caller]
            fn add(self, rhs: &Tensor) -> Tensor {
                rhs.add_scalar(self)
            }
        }
        impl Add<Tensor> for $n {
            type Output = Tensor;
            #[track_caller]
            fn add(self, rhs: Tensor) -> Tensor {
                rhs.add_scalar(self)
            }
        }
        impl Mul<&Tensor> for $n {
            type Output = Tensor;
            #[track_caller]
            fn mul(self, rhs: &Tensor) -> Tensor {
                rhs.mul_scalar(self)
            }
        }
        impl Mul<Tensor> for $n {
            type Output = Tensor;
            #[track_caller]
            fn mul(self, rhs: Tensor) -> Tensor {
                rhs.mul_scalar(self)
            }
        }
        impl Sub<&Tensor> for $n {
            type Output = Tensor;
            #[track_caller]
            fn sub(self, rhs: &Tensor) -> Tensor {
                rhs.neg().add_scalar(self)
            }
        }
        impl Sub<Tensor> for $n {
            type Output = Tensor;
            #[track_caller]
            fn sub(self, rhs: Tensor) -> Tensor {
                rhs.neg().add_scalar(self)
            }
        }
    )*};
}

number_lhs!(f64, i64);

impl Neg for &Tensor {
    type Output = Tensor;
    #[track_caller]
    fn neg(self) -> Tensor {
        Tensor::neg(self)
    }
}

impl Neg for Tensor {
    type Output = Tensor;
    #[track_caller]
    fn neg(self) -> Tensor {
        Tensor::neg(&self)
    }
}

/// `tensor op= tensor` and `tensor op= number`: the in-place operators.
macro_rules! assign {
    ($Trait:ident, $method:ident, $tensor_op:ident, $scalar_op:ident) => {
        impl $Trait<&Tensor> for Tensor {
            #[track_caller]
            fn $method(&mut self, rhs: &Tensor) {
                self.$tensor_op(rhs);
            }
        }
        impl $Trait<Tensor> for Tensor {
            #[track_caller]
            fn $method(&mut self, rhs: Tensor) {
                self.$tensor_op(&rhs);
            }
        }
        assign!(@numbers $Trait, $method, $scalar_op, f64, i64);
    };
    (@numbers $Trait:ident, $method:ident, $scalar_op:ident, $($n:ty),*) => {$(
        impl $Trait<$n> for Tensor {
            #[track_caller]
            fn $method(&mut self, rhs: $n) {
                self.$scalar_op(rhs);
            }
        }
    )*};
}

assign!(AddAssign, add_assign, add_, add_scalar_);
assign!(SubAssign, sub_assign, sub_, sub_scalar_);
assign!(MulAssign, mul_assign, mul_, mul_scalar_);
assign!(DivAssign, div_assign, div_, div_scalar_);
