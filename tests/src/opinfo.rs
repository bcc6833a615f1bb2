//! Replays PyTorch's OpInfo samples (recorded by `scripts/opinfo_golden.py` into
//! `tests/golden/opinfo/`) through oxten's boxed operator table.
//!
//! Every case names an operator by its schema (`add.Tensor`) and gives its arguments by schema
//! name, so a new operator in the YAML is replayed without glue: the case's values are turned
//! into [`IValue`]s by the types oxten's schema declares ([`ArgInfo::ty`]) and the operator's
//! boxed entry point is called. A case fails on a panic, on an error where PyTorch returned,
//! on success where PyTorch raised, and on a dtype, shape or value that differs beyond the
//! dtype's tolerance; gradient cases compare `torch.autograd.grad`'s answers. Known failures
//! are listed, each with its reason, in `tests/golden/opinfo/skips.txt`.

use oxten::dispatch::{ArgInfo, IValue, OpInfo, Stack};
use oxten::{ops, DType, Device, Layout, MemoryFormat, Scalar, Tensor};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

/// One recorded call.
pub struct Case {
    /// The OpInfo (`nn.functional.relu6`, `max.reduction_with_dim`).
    pub op: String,
    /// The schema name (`add.Tensor`).
    pub schema: String,
    /// `sample`, `reference`, `noncontiguous`, `grad` or `error`.
    pub kind: String,
    pub dtype: String,
    json: Value,
}

impl Case {
    /// `op schema dtype kind`, the string skip patterns match.
    pub fn id(&self) -> String {
        format!("{} {} {} {}", self.op, self.schema, self.dtype, self.kind)
    }
}

/// The golden files: the summary line, the cases and the tensors they name.
pub struct Golden {
    pub summary: Value,
    pub cases: Vec<Case>,
    tensors: HashMap<String, Tensor>,
}

/// Reads `cases.jsonl` and `tensors.safetensors` from `dir`.
pub fn load(dir: &Path) -> Golden {
    let text = std::fs::read_to_string(dir.join("cases.jsonl")).expect("tests/golden/opinfo/cases.jsonl");
    let mut lines = text.lines();
    let summary: Value = serde_json::from_str(lines.next().expect("summary line")).expect("summary JSON");
    let cases = lines
        .map(|l| {
            let json: Value = serde_json::from_str(l).expect("case JSON");
            let s = |k: &str| json[k].as_str().unwrap_or_default().to_string();
            Case { op: s("op"), schema: s("schema"), kind: s("kind"), dtype: s("dtype"), json }
        })
        .collect();
    let tensors = oxten::safetensors::load(dir.join("tensors.safetensors")).expect("tensors.safetensors");
    Golden { summary, cases, tensors: tensors.into_iter().collect() }
}

/// A case's outcome.
#[derive(Debug)]
pub enum Outcome {
    Pass,
    Fail(String),
}

/// Per-case tensors: arguments with the same "id" are the same oxten tensor, and arguments
/// with the same "s" views of the same storage.
struct Args<'a> {
    golden: &'a Golden,
    made: HashMap<i64, Tensor>,
    storages: HashMap<i64, Tensor>,
    /// Inputs PyTorch differentiated, in the order of its `grads`.
    grad_inputs: Vec<Tensor>,
}

impl Args<'_> {
    fn tensor(&mut self, v: &Value) -> Result<Tensor, String> {
        let key = v["t"].as_str().ok_or("tensor reference without a key")?;
        let id = v["id"].as_i64();
        if let Some(t) = id.and_then(|id| self.made.get(&id)) {
            return Ok(t.clone());
        }
        // A private copy: buffers are shared between cases, and an in-place operator writes
        // through its view.
        let stored = self.golden.tensors.get(key).ok_or_else(|| format!("tensor {key} missing"))?;
        let copy = || oxten::ops::deep_clone::call(stored, None).map_err(|e| format!("clone: {e}"));
        let buf = match v["s"].as_i64() {
            Some(s) => match self.storages.get(&s) {
                Some(b) => b.clone(),
                None => {
                    let b = copy()?;
                    self.storages.insert(s, b.clone());
                    b
                }
            },
            None => copy()?,
        };
        let ints =
            |k: &str| -> Vec<i64> { v[k].as_array().map_or(vec![], |a| a.iter().filter_map(Value::as_i64).collect()) };
        let offset = v["offset"].as_i64().unwrap_or(0);
        let view = oxten::ops::as_strided::call(&buf, &ints("sizes"), &ints("strides"), Some(offset))
            .map_err(|e| format!("as_strided: {e}"))?;
        let t = if v["grad"].as_bool() == Some(true) {
            // A leaf, as PyTorch's sample was (a view of the stored buffer keeps the storage
            // that `as_strided` reads beyond the view).
            let leaf = view.detach();
            leaf.try_requires_grad_(true).map_err(|e| e.to_string())?;
            self.grad_inputs.push(leaf.clone());
            leaf
        } else {
            view
        };
        if let Some(id) = id {
            self.made.insert(id, t.clone());
        }
        Ok(t)
    }

    /// `v` as the IValue that schema type `ty` takes.
    fn ivalue(&mut self, ty: &str, v: &Value) -> Result<IValue, String> {
        let (ty, optional) = match ty.strip_suffix('?') {
            Some(t) => (t, true),
            None => (ty, false),
        };
        if v.is_null() {
            return if optional { Ok(IValue::None) } else { Err(format!("None for non-optional `{ty}`")) };
        }
        // `Tensor(a)`, `Tensor(a!)` → `Tensor`.
        let base = ty.split('(').next().unwrap_or(ty);
        if let Some((el, n)) = list_type(base) {
            return self.list(el, n, v);
        }
        match base {
            "Tensor" => Ok(IValue::Tensor(self.tensor(v)?)),
            "int" | "SymInt" => v.as_i64().map(IValue::Int).ok_or_else(|| format!("{v} is not an int")),
            "float" => float(v).map(IValue::Float),
            "bool" => v.as_bool().map(IValue::Bool).ok_or_else(|| format!("{v} is not a bool")),
            "Scalar" => scalar(v).map(IValue::Scalar),
            "str" => v.as_str().map(|s| IValue::Str(s.into())).ok_or_else(|| format!("{v} is not a str")),
            "ScalarType" => {
                let name = v["dtype"].as_str().ok_or_else(|| format!("{v} is not a dtype"))?;
                DType::from_name(name).map(IValue::DType).ok_or_else(|| format!("unknown dtype {name}"))
            }
            "MemoryFormat" => match v["memory_format"].as_str() {
                Some("contiguous_format") => Ok(IValue::MemoryFormat(MemoryFormat::Contiguous)),
                Some("preserve_format") => Ok(IValue::MemoryFormat(MemoryFormat::Preserve)),
                Some("channels_last") => Ok(IValue::MemoryFormat(MemoryFormat::ChannelsLast)),
                Some("channels_last_3d") => Ok(IValue::MemoryFormat(MemoryFormat::ChannelsLast3d)),
                _ => Err(format!("memory format {v}")),
            },
            "Layout" if v["str"] == "strided" => Ok(IValue::Layout(Layout::Strided)),
            "Device" if v["str"] == "cpu" || v == "cpu" => Ok(IValue::Device(Device::Cpu)),
            _ => Err(format!("schema type `{ty}` with value {v}")),
        }
    }

    fn list(&mut self, el: &str, n: Option<usize>, v: &Value) -> Result<IValue, String> {
        // An int for `int[N]` stands for N copies, as PyTorch's parser reads it.
        let items: Vec<Value> = match v.as_array() {
            Some(a) => a.clone(),
            None => vec![v.clone(); n.unwrap_or(1)],
        };
        let ints = || {
            items
                .iter()
                .map(|x| x.as_i64().ok_or_else(|| format!("{x} is not an int")))
                .collect::<Result<Vec<i64>, String>>()
        };
        Ok(match el {
            "int" | "SymInt" => IValue::IntList(ints()?),
            "float" => IValue::FloatList(items.iter().map(float).collect::<Result<_, _>>()?),
            "bool" => {
                IValue::BoolList(items.iter().map(|x| x.as_bool().ok_or("not a bool")).collect::<Result<_, _>>()?)
            }
            "Scalar" => IValue::ScalarList(items.iter().map(scalar).collect::<Result<_, _>>()?),
            "Tensor" => IValue::TensorList(items.iter().map(|x| self.tensor(x)).collect::<Result<_, _>>()?),
            "Tensor?" => IValue::OptionalTensorList(
                items
                    .iter()
                    .map(|x| if x.is_null() { Ok(None) } else { self.tensor(x).map(Some) })
                    .collect::<Result<_, _>>()?,
            ),
            _ => return Err(format!("list of `{el}`")),
        })
    }
}

/// `int[2]` → (`int`, Some(2)); `Tensor?[]` → (`Tensor?`, None).
fn list_type(ty: &str) -> Option<(&str, Option<usize>)> {
    let open = ty.rfind('[')?;
    let inner = ty[open + 1..].strip_suffix(']')?;
    Some((&ty[..open], inner.parse().ok()))
}

fn float(v: &Value) -> Result<f64, String> {
    if let Some(s) = v["float"].as_str() {
        return s.parse::<f64>().map_err(|e| e.to_string());
    }
    v.as_f64().ok_or_else(|| format!("{v} is not a float"))
}

fn scalar(v: &Value) -> Result<Scalar, String> {
    if let Some(b) = v.as_bool() {
        Ok(Scalar::Bool(b))
    } else if let Some(i) = v.as_i64() {
        Ok(Scalar::Int(i))
    } else {
        float(v).map(Scalar::Float)
    }
}

/// (rtol, atol) per dtype: torch.testing's defaults, loosened where the kernels legitimately
/// differ (summation order, other approximations of the transcendental functions).
pub fn tolerance(d: DType, grad: bool) -> (f64, f64) {
    match d {
        DType::F64 if grad => (1e-7, 1e-7),
        DType::F64 => (1e-9, 1e-9),
        DType::F32 => (1e-5, 1e-5),
        DType::F16 => (2e-3, 2e-3),
        DType::BF16 => (1.6e-2, 2e-2),
        _ => (0.0, 0.0),
    }
}

/// Compares `got` with PyTorch's `want`. With `exact` (the float64 answer of a low-precision
/// case), an element also passes when it is within twice PyTorch's own error of it.
fn compare(
    what: &str,
    got: &Tensor,
    want: &Tensor,
    exact: Option<&Tensor>,
    values: bool,
    grad: bool,
) -> Result<(), String> {
    if got.dtype() != want.dtype() || got.sizes()[..] != want.sizes()[..] {
        return Err(format!(
            "{what}: {} {:?}, PyTorch {} {:?}",
            got.dtype(),
            &got.sizes()[..],
            want.dtype(),
            &want.sizes()[..]
        ));
    }
    if !values {
        return Ok(());
    }
    let g = got.detach().to_f64_vec().map_err(|e| format!("{what}: reading values: {e}"))?;
    let w = want.to_f64_vec().map_err(|e| e.to_string())?;
    let (rtol, atol) = tolerance(want.dtype(), grad);
    let e = match exact {
        Some(x) => Some(x.to_f64_vec().map_err(|e| e.to_string())?),
        None => None,
    };
    for (j, (a, b)) in g.iter().zip(&w).enumerate() {
        let mut ok = (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= atol + rtol * b.abs();
        if let (false, Some(x)) = (ok, e.as_ref().and_then(|e| e.get(j))) {
            ok = (a - x).abs() <= 2.0 * (b - x).abs() + atol + rtol * x.abs();
        }
        if !ok {
            return Err(format!("{what}[{j}]: {a} vs PyTorch {b}"));
        }
    }
    Ok(())
}

fn take_panic(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default()
}

/// The returns of a boxed call, flattened as the recorder flattens PyTorch's.
/// The decompositions' vectors are unique only up to sign: `scripts/opinfo_golden.py` records
/// (and differentiates) their magnitudes, and the first `k = min(m, n)` singular vectors only
/// (the others are any orthonormal completion); the same is taken of oxten's.
fn gauge_fixed(schema: &str, got: Vec<IValue>) -> Result<Vec<IValue>, String> {
    let base = schema.split('.').next().unwrap_or(schema);
    let tensor = |v: &IValue| match v {
        IValue::Tensor(t) => Ok(t.clone()),
        _ => Err(format!("{schema}: a decomposition returned a non-tensor")),
    };
    let e = |e: oxten::Error| e.to_string();
    match (base, got.as_slice()) {
        ("linalg_eigh" | "_linalg_eigh", [l, v]) => {
            Ok(vec![l.clone(), IValue::Tensor(tensor(v)?.try_abs().map_err(e)?)])
        }
        ("linalg_svd" | "_linalg_svd" | "svd", [u, s, v]) => {
            let (u, s, v) = (tensor(u)?, tensor(s)?, tensor(v)?);
            let k = s.size(-1).map_err(e)?;
            // `Vh`'s rows, or (for `svd`, which returns `V`) its columns.
            let v_dim = if base == "svd" { -1 } else { -2 };
            let u = ops::narrow::call(&u, -1, 0, k).and_then(|u| u.try_abs()).map_err(e)?;
            let v = ops::narrow::call(&v, v_dim, 0, k).and_then(|v| v.try_abs()).map_err(e)?;
            Ok(vec![IValue::Tensor(u), IValue::Tensor(s), IValue::Tensor(v)])
        }
        _ => Err(format!("{schema}: no sign convention known for its outputs")),
    }
}

fn flatten(stack: Stack) -> Vec<IValue> {
    stack
        .into_iter()
        .flat_map(|v| match v {
            IValue::TensorList(l) => l.into_iter().map(IValue::Tensor).collect(),
            other => vec![other],
        })
        .collect()
}

impl Golden {
    /// Runs one case.
    pub fn run(&self, ops: &HashMap<&'static str, OpInfo>, case: &Case) -> Outcome {
        match catch_unwind(AssertUnwindSafe(|| self.run_inner(ops, case))) {
            Ok(Ok(())) => Outcome::Pass,
            Ok(Err(e)) => Outcome::Fail(e),
            Err(p) => Outcome::Fail(format!("panicked: {}", take_panic(p))),
        }
    }

    fn run_inner(&self, ops: &HashMap<&'static str, OpInfo>, case: &Case) -> Result<(), String> {
        let op = ops.get(case.schema.as_str()).ok_or_else(|| format!("oxten has no operator `{}`", case.schema))?;
        let mut args = Args { golden: self, made: HashMap::new(), storages: HashMap::new(), grad_inputs: vec![] };
        let stack = build_stack(&mut args, op.args, &case.json["args"])?;
        let mut out_stack = stack;
        let call = (op.call_boxed)(&mut out_stack);
        let random = case.json["random"].as_bool() == Some(true);
        match (case.kind.as_str(), call) {
            ("error", Ok(())) => {
                Err(format!("PyTorch raised {} ({}), oxten returned", case.json["error"], case.json["message"]))
            }
            ("error", Err(_)) => Ok(()),
            (_, Err(e)) => Err(format!("oxten failed: {e}")),
            (kind, Ok(())) => {
                let mut got = flatten(out_stack);
                // `compare: n`: PyTorch's answer is recorded for the first n outputs only.
                if let Some(n) = case.json["compare"].as_u64() {
                    got.truncate(n as usize);
                }
                if case.json["gauge"].as_u64() == Some(1) {
                    got = gauge_fixed(&case.schema, got)?;
                }
                let want = case.json["out"].as_array().cloned().unwrap_or_default();
                if got.len() != want.len() {
                    return Err(format!("{} returns, PyTorch {}", got.len(), want.len()));
                }
                let mut outs = vec![];
                let exact = case.json["exact"].as_array().cloned().unwrap_or_default();
                for (k, (g, w)) in got.iter().zip(&want).enumerate() {
                    match g {
                        IValue::Tensor(t) => {
                            let w = self.expected(w)?;
                            let x = match exact.get(k) {
                                Some(x) if !x.is_null() => Some(self.expected(x)?),
                                _ => None,
                            };
                            let r = compare(&format!("out {k}"), t, &w, x.as_ref(), !random, false);
                            if let (Err(e), 0 | 1) = (&r, k) {
                                // Equal values may be picked at any of their indices.
                                self.check_tie_indices(case, k, t, &want).map_err(|why| format!("{e} ({why})"))?;
                            } else {
                                r?;
                            }
                            outs.push(t.clone());
                        }
                        other => compare_plain(k, other, w)?,
                    }
                }
                if kind == "grad" {
                    self.check_grads(case, &args, &outs)?;
                }
                Ok(())
            }
        }
    }

    /// For the selection ops, whose index of a value that occurs more than once PyTorch leaves
    /// unspecified (their indices are output 1; `argsort`'s without `stable=True`, output 0):
    /// passes when `self` at oxten's indices holds the values PyTorch's indices select.
    fn check_tie_indices(&self, case: &Case, k: usize, indices: &Tensor, want: &[Value]) -> Result<(), String> {
        const SELECTION: [&str; 9] =
            ["topk", "kthvalue", "mode", "median.dim", "nanmedian.dim", "sort", "sort.stable", "max.dim", "min.dim"];
        let arg = |name: &str| {
            case.json["args"].as_array().and_then(|a| a.iter().find(|t| t[0] == name)).map(|t| t[1].clone())
        };
        let argsort =
            matches!(case.schema.as_str(), "argsort" | "argsort.stable") && arg("stable") != Some(Value::Bool(true));
        if !(k == 1 && SELECTION.contains(&case.schema.as_str()) || k == 0 && argsort) {
            return Err("not a selection op".into());
        }
        // The selection operators do not write to `self`: a fresh copy of it is its value.
        let input = self.expected(&arg("self").ok_or("no self")?)?;
        let at = |indices: &Tensor| -> Result<Tensor, String> {
            if input.dim() == 0 {
                return Ok(input.clone());
            }
            let dim = arg("dim").and_then(|d| d.as_i64()).unwrap_or(-1);
            let d = if dim < 0 { dim + input.dim() as i64 } else { dim };
            let idx = if indices.dim() < input.dim() { indices.try_unsqueeze(d) } else { Ok(indices.clone()) };
            idx.and_then(|i| input.try_gather(d, &i)).map_err(|e| e.to_string())
        };
        let want = if argsort { at(&self.expected(&want[0])?)? } else { self.expected(&want[0])? };
        let got = at(indices)?.try_reshape(&want.sizes()).map_err(|e| e.to_string())?;
        compare("self at the indices", &got, &want, None, true, false)
    }

    fn expected(&self, v: &Value) -> Result<Tensor, String> {
        let mut a = Args { golden: self, made: HashMap::new(), storages: HashMap::new(), grad_inputs: vec![] };
        a.tensor(v)
    }

    fn check_grads(&self, case: &Case, args: &Args, outs: &[Tensor]) -> Result<(), String> {
        let outs: Vec<Tensor> = outs.iter().filter(|t| t.requires_grad()).cloned().collect();
        let grad_out: Vec<Tensor> = case.json["grad_out"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .map(|g| self.expected(g))
            .collect::<Result<_, _>>()?;
        if outs.len() != grad_out.len() {
            return Err(format!("{} outputs require grad, PyTorch {}", outs.len(), grad_out.len()));
        }
        let opts = oxten::autograd::GradOpts {
            grad_outputs: grad_out.into_iter().map(Some).collect(),
            allow_unused: true,
            ..Default::default()
        };
        let grads =
            oxten::autograd::grad_with(&outs, &args.grad_inputs, opts).map_err(|e| format!("backward failed: {e}"))?;
        let want = case.json["grads"].as_array().cloned().unwrap_or_default();
        if want.len() != grads.len() {
            return Err(format!("{} gradients, PyTorch {}", grads.len(), want.len()));
        }
        for (k, (g, w)) in grads.iter().zip(&want).enumerate() {
            match (g, w.is_null()) {
                (None, true) => {}
                (Some(g), true) => {
                    // PyTorch had no gradient (unused input); oxten's must then be zero.
                    if g.to_f64_vec().map_err(|e| e.to_string())?.iter().any(|x| *x != 0.0) {
                        return Err(format!("grad {k}: nonzero where PyTorch has none"));
                    }
                }
                (None, false) => {
                    let w = self.expected(w)?;
                    if w.to_f64_vec().map_err(|e| e.to_string())?.iter().any(|x| *x != 0.0) {
                        return Err(format!("grad {k}: none where PyTorch's is nonzero"));
                    }
                }
                (Some(g), false) => compare(&format!("grad {k}"), g, &self.expected(w)?, None, true, true)?,
            }
        }
        Ok(())
    }
}

fn compare_plain(k: usize, got: &IValue, want: &Value) -> Result<(), String> {
    let ok = match got {
        IValue::Bool(b) => want.as_bool() == Some(*b),
        IValue::Int(i) => want.as_i64() == Some(*i),
        IValue::Float(f) => {
            float(want).map(|w| (w.is_nan() && f.is_nan()) || (w - f).abs() <= 1e-6 * (1.0 + w.abs())) == Ok(true)
        }
        // The kind must match too: `item` of an integer tensor is an int, of a float one a float.
        IValue::Scalar(s) => match (scalar(want), s) {
            (Ok(Scalar::Float(w)), Scalar::Float(f)) => w == *f || (w.is_nan() && f.is_nan()),
            (Ok(w), s) => w == *s,
            (Err(_), _) => false,
        },
        IValue::None => want.is_null(),
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(format!("out {k}: {got:?}, PyTorch {want}"))
    }
}

/// The stack for oxten's schema `args` from the case's `[name, value, is_default]` triples.
fn build_stack(a: &mut Args, args: &[ArgInfo], given: &Value) -> Result<Stack, String> {
    let given: Vec<(String, Value, bool)> = given
        .as_array()
        .ok_or("case without args")?
        .iter()
        .map(|t| (t[0].as_str().unwrap_or_default().to_string(), t[1].clone(), t[2].as_bool() == Some(true)))
        .collect();
    for (name, _, default) in &given {
        if !default && !args.iter().any(|x| x.name == name) {
            return Err(format!("oxten's schema has no argument `{name}`"));
        }
    }
    let mut stack = Stack::new();
    for arg in args {
        let v = match given.iter().find(|(n, _, _)| n == arg.name) {
            Some((_, v, _)) => a.ivalue(arg.ty, v).map_err(|e| format!("argument `{}`: {e}", arg.name))?,
            None => return Err(format!("PyTorch's schema has no argument `{}`", arg.name)),
        };
        stack.push(v);
    }
    Ok(stack)
}

/// `self=float32[5, 5] eps=0.2`: a case's arguments, for failure messages.
pub fn describe_args(args: &Value) -> String {
    fn one(v: &Value) -> String {
        match v {
            Value::Object(o) if o.contains_key("t") => {
                format!("{}/{}{}", v["sizes"], v["strides"], if v["grad"] == true { " grad" } else { "" })
            }
            Value::Array(a) => format!("[{}]", a.iter().map(one).collect::<Vec<_>>().join(", ")),
            other => other.to_string(),
        }
    }
    args.as_array()
        .map(|a| {
            a.iter()
                .filter(|t| t[2] != true)
                .map(|t| format!("{}={}", t[0].as_str().unwrap_or(""), one(&t[1])))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default()
}

/// One line of `skips.txt`: `PATTERN | reason`, `*` in PATTERN matching any text.
pub struct Skip {
    pub line: usize,
    pub pattern: String,
    pub reason: String,
}

/// Reads the skip list (comments start with `#`).
pub fn skips(text: &str) -> Vec<Skip> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .map(|(i, l)| {
            let (p, r) = l.split_once('|').unwrap_or((l, ""));
            Skip { line: i + 1, pattern: p.trim().to_string(), reason: r.trim().to_string() }
        })
        .collect()
}

/// `*` matches any run of characters.
pub fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let mut rest = text;
    for (i, p) in parts.iter().enumerate() {
        if i == 0 {
            match rest.strip_prefix(p) {
                Some(r) => rest = r,
                None => return false,
            }
        } else if i == parts.len() - 1 {
            return rest.ends_with(p);
        } else {
            match rest.find(p) {
                Some(at) => rest = &rest[at + p.len()..],
                None => return false,
            }
        }
    }
    true
}

/// The result of replaying every case.
#[derive(Default)]
pub struct Report {
    pub passed: usize,
    /// Failures matched by a skip line, per line.
    pub skipped: BTreeMap<usize, usize>,
    /// Failures no skip line covers: (case id, message).
    pub failed: Vec<(String, String)>,
    pub by_kind: BTreeMap<String, (usize, usize)>,
}

/// Replays every case, sorting failures into skipped (by line) and failed.
pub fn replay(golden: &Golden, skips: &[Skip]) -> Report {
    oxten::init();
    let ops: HashMap<&'static str, OpInfo> = oxten::ops::operator_infos().into_iter().map(|o| (o.name, o)).collect();
    let mut report = Report::default();
    for case in &golden.cases {
        let entry = report.by_kind.entry(case.kind.clone()).or_default();
        entry.0 += 1;
        match golden.run(&ops, case) {
            Outcome::Pass => {
                report.passed += 1;
                entry.1 += 1;
            }
            Outcome::Fail(msg) => {
                let id = case.id();
                match skips.iter().find(|s| glob(&s.pattern, &id)) {
                    Some(s) => *report.skipped.entry(s.line).or_default() += 1,
                    None => report.failed.push((id, format!("{msg}\n    args: {}", describe_args(&case.json["args"])))),
                }
            }
        }
    }
    report
}
