//! `IValue`: the boxed value of an operator argument, and `Stack`, the boxed calling convention
//! used by fallbacks and by operators defined at run time.

use crate::device::{Device, Layout, MemoryFormat};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::generator::Generator;
use crate::scalar::Scalar;
use crate::tensor::Tensor;

/// One boxed argument or return value.
#[derive(Clone, Debug)]
pub enum IValue {
    None,
    Tensor(Tensor),
    TensorList(Vec<Tensor>),
    OptionalTensorList(Vec<Option<Tensor>>),
    Int(i64),
    IntList(Vec<i64>),
    Float(f64),
    FloatList(Vec<f64>),
    Bool(bool),
    BoolList(Vec<bool>),
    Str(String),
    Scalar(Scalar),
    ScalarList(Vec<Scalar>),
    DType(DType),
    Device(Device),
    MemoryFormat(MemoryFormat),
    Layout(Layout),
    Generator(Generator),
}

/// Arguments are pushed in schema order; a kernel pops them and pushes its returns.
pub type Stack = Vec<IValue>;

impl IValue {
    /// A short type name for error messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            IValue::None => "None",
            IValue::Tensor(_) => "Tensor",
            IValue::TensorList(_) => "Tensor[]",
            IValue::OptionalTensorList(_) => "Tensor?[]",
            IValue::Int(_) => "int",
            IValue::IntList(_) => "int[]",
            IValue::Float(_) => "float",
            IValue::FloatList(_) => "float[]",
            IValue::Bool(_) => "bool",
            IValue::BoolList(_) => "bool[]",
            IValue::Str(_) => "str",
            IValue::Scalar(_) => "Scalar",
            IValue::ScalarList(_) => "Scalar[]",
            IValue::DType(_) => "ScalarType",
            IValue::Device(_) => "Device",
            IValue::MemoryFormat(_) => "MemoryFormat",
            IValue::Layout(_) => "Layout",
            IValue::Generator(_) => "Generator",
        }
    }
    /// Tensors held by this value (for computing a boxed call's key set).
    pub fn tensors(&self) -> Vec<&Tensor> {
        match self {
            IValue::Tensor(t) => vec![t],
            IValue::TensorList(v) => v.iter().collect(),
            IValue::OptionalTensorList(v) => v.iter().flatten().collect(),
            _ => vec![],
        }
    }
}

/// Conversion between Rust argument types and [`IValue`]; used by the generated boxing code.
pub trait IntoIValue {
    fn into_ivalue(self) -> IValue;
}
/// The inverse of [`IntoIValue`].
pub trait FromIValue: Sized {
    fn from_ivalue(v: IValue) -> Result<Self>;
}

fn mismatch(want: &str, got: &IValue) -> Error {
    Error::runtime(format!("boxed kernel returned {} where {want} was expected", got.type_name()))
}

macro_rules! ivalue_conv {
    ($($t:ty => $variant:ident),* $(,)?) => {$(
        impl IntoIValue for $t {
            fn into_ivalue(self) -> IValue { IValue::$variant(self) }
        }
        impl FromIValue for $t {
            fn from_ivalue(v: IValue) -> Result<Self> {
                match v {
                    IValue::$variant(x) => Ok(x),
                    other => Err(mismatch(stringify!($variant), &other)),
                }
            }
        }
        impl IntoIValue for Option<$t> {
            fn into_ivalue(self) -> IValue { self.map_or(IValue::None, |x| IValue::$variant(x)) }
        }
        impl FromIValue for Option<$t> {
            fn from_ivalue(v: IValue) -> Result<Self> {
                match v {
                    IValue::None => Ok(None),
                    IValue::$variant(x) => Ok(Some(x)),
                    other => Err(mismatch(stringify!($variant), &other)),
                }
            }
        }
    )*};
}
ivalue_conv!(
    Tensor => Tensor, Vec<Tensor> => TensorList, Vec<Option<Tensor>> => OptionalTensorList,
    i64 => Int, Vec<i64> => IntList, f64 => Float, Vec<f64> => FloatList, bool => Bool,
    Vec<bool> => BoolList, String => Str, Scalar => Scalar, Vec<Scalar> => ScalarList, DType => DType, Device => Device,
    MemoryFormat => MemoryFormat, Layout => Layout,
);

impl IntoIValue for &Tensor {
    fn into_ivalue(self) -> IValue {
        IValue::Tensor(self.clone())
    }
}
impl IntoIValue for Option<&Tensor> {
    fn into_ivalue(self) -> IValue {
        self.map_or(IValue::None, |t| IValue::Tensor(t.clone()))
    }
}
impl IntoIValue for Option<&Generator> {
    fn into_ivalue(self) -> IValue {
        self.map_or(IValue::None, |g| IValue::Generator(g.clone()))
    }
}
impl FromIValue for Option<Generator> {
    fn from_ivalue(v: IValue) -> Result<Self> {
        match v {
            IValue::None => Ok(None),
            IValue::Generator(g) => Ok(Some(g)),
            other => Err(mismatch("Generator", &other)),
        }
    }
}
impl IntoIValue for &[Tensor] {
    fn into_ivalue(self) -> IValue {
        IValue::TensorList(self.to_vec())
    }
}
impl IntoIValue for &[Option<Tensor>] {
    fn into_ivalue(self) -> IValue {
        IValue::OptionalTensorList(self.to_vec())
    }
}
impl IntoIValue for &[i64] {
    fn into_ivalue(self) -> IValue {
        IValue::IntList(self.to_vec())
    }
}
impl IntoIValue for Option<&[i64]> {
    fn into_ivalue(self) -> IValue {
        self.map_or(IValue::None, |v| IValue::IntList(v.to_vec()))
    }
}
impl IntoIValue for &[bool] {
    fn into_ivalue(self) -> IValue {
        IValue::BoolList(self.to_vec())
    }
}
impl IntoIValue for &[f64] {
    fn into_ivalue(self) -> IValue {
        IValue::FloatList(self.to_vec())
    }
}
impl IntoIValue for &[Scalar] {
    fn into_ivalue(self) -> IValue {
        IValue::ScalarList(self.to_vec())
    }
}
impl IntoIValue for Option<&[f64]> {
    fn into_ivalue(self) -> IValue {
        self.map_or(IValue::None, |v| IValue::FloatList(v.to_vec()))
    }
}
impl IntoIValue for &str {
    fn into_ivalue(self) -> IValue {
        IValue::Str(self.to_string())
    }
}
impl IntoIValue for Option<&str> {
    fn into_ivalue(self) -> IValue {
        self.map_or(IValue::None, |s| IValue::Str(s.to_string()))
    }
}
impl IntoIValue for () {
    fn into_ivalue(self) -> IValue {
        IValue::None
    }
}
impl FromIValue for () {
    fn from_ivalue(_: IValue) -> Result<Self> {
        Ok(())
    }
}
impl FromIValue for (Tensor, Tensor) {
    fn from_ivalue(v: IValue) -> Result<Self> {
        match v {
            IValue::TensorList(mut l) if l.len() == 2 => {
                let b = l.pop().expect("len 2");
                Ok((l.pop().expect("len 2"), b))
            }
            other => Err(mismatch("(Tensor, Tensor)", &other)),
        }
    }
}

impl FromIValue for (Tensor, Tensor, Tensor) {
    fn from_ivalue(v: IValue) -> Result<Self> {
        match v {
            IValue::TensorList(l) if l.len() == 3 => {
                let mut it = l.into_iter();
                let (a, b, c) = (it.next(), it.next(), it.next());
                Ok((a.expect("len 3"), b.expect("len 3"), c.expect("len 3")))
            }
            other => Err(mismatch("(Tensor, Tensor, Tensor)", &other)),
        }
    }
}

impl FromIValue for (Tensor, Tensor, Tensor, Tensor) {
    fn from_ivalue(v: IValue) -> Result<Self> {
        match v {
            IValue::TensorList(l) if l.len() == 4 => {
                let mut it = l.into_iter();
                let (a, b, c, d) = (it.next(), it.next(), it.next(), it.next());
                Ok((a.expect("len 4"), b.expect("len 4"), c.expect("len 4"), d.expect("len 4")))
            }
            other => Err(mismatch("(Tensor, Tensor, Tensor, Tensor)", &other)),
        }
    }
}

impl FromIValue for (Tensor, Vec<Tensor>) {
    /// A tensor and a tensor list, packed as one list by [`pop_returns`] (the tensor first).
    fn from_ivalue(v: IValue) -> Result<Self> {
        match v {
            IValue::TensorList(mut l) if !l.is_empty() => {
                let rest = l.split_off(1);
                Ok((l.pop().expect("len 1"), rest))
            }
            other => Err(mismatch("(Tensor, Tensor[])", &other)),
        }
    }
}

/// Pops the returns of a boxed call: a kernel pushes one value per return, in order; several
/// returns come back packed as a list (a last `Tensor[]` return's tensors appended).
pub fn pop_returns<R: FromIValue>(stack: &mut Stack, n: usize) -> Result<R> {
    if stack.len() < n {
        return Err(Error::runtime(format!("boxed kernel left {} values on the stack, expected {n}", stack.len())));
    }
    let vals: Vec<IValue> = stack.drain(stack.len() - n..).collect();
    match n {
        0 => R::from_ivalue(IValue::None),
        1 => R::from_ivalue(vals.into_iter().next().expect("one value")),
        _ => {
            let mut ts = Vec::with_capacity(n);
            for (i, v) in vals.into_iter().enumerate() {
                match v {
                    IValue::Tensor(t) => ts.push(t),
                    // A last `Tensor[]` return (`histogramdd`'s edges) follows the tensors.
                    IValue::TensorList(l) if i == n - 1 => ts.extend(l),
                    other => return Err(mismatch("Tensor", &other)),
                }
            }
            R::from_ivalue(IValue::TensorList(ts))
        }
    }
}
