//! `Display` for tensors, with PyTorch's print options (`torch._tensor_str`): precision 4, one
//! width and one notation for all elements (fixed, integral `1.`, or scientific when magnitudes
//! span more than 1000× or leave [1e-4, 1e8]), tensors over 1000 elements summarised to their
//! first and last 3 items per dimension, rows wrapped at 80 columns, and the suffixes PyTorch
//! adds (device, size of empty tensors, a non-default dtype, `requires_grad`/`grad_fn`).
//! Dtypes are named without PyTorch's `torch.` prefix (`dtype=float64`).

use super::Tensor;
use crate::device::Device;
use crate::dtype::DType;
use std::fmt;

const PRECISION: usize = 4;
const THRESHOLD: i64 = 1000;
const EDGE_ITEMS: i64 = 3;
const LINE_WIDTH: usize = 80;

/// The values shown: one per element of the grid of shown indices, in row-major order.
enum Values {
    Float(Vec<f64>),
    Int(Vec<i64>),
    Bool(Vec<bool>),
}

/// The indices shown along a dimension of `size`: all, or the first and last [`EDGE_ITEMS`].
fn shown(size: i64, summarize: bool) -> Vec<i64> {
    if summarize && size > 2 * EDGE_ITEMS {
        (0..EDGE_ITEMS).chain(size - EDGE_ITEMS..size).collect()
    } else {
        (0..size).collect()
    }
}

/// Reads the shown elements of a host tensor through 1-D views of its last dimension.
fn gather(t: &Tensor, summarize: bool) -> crate::Result<Values> {
    let (sizes, strides) = (t.sizes().to_vec(), t.strides().to_vec());
    let read = |v: &Tensor, out: &mut Values| -> crate::Result<()> {
        match out {
            Values::Float(o) => o.extend(v.to_f64_vec()?),
            Values::Int(o) if v.dtype() == DType::I64 => o.extend(v.to_vec::<i64>()?),
            Values::Int(o) => o.extend(v.to_f64_vec()?.into_iter().map(|x| x as i64)),
            Values::Bool(o) => o.extend(v.to_vec::<bool>()?),
        }
        Ok(())
    };
    let mut out = match t.dtype() {
        DType::Bool => Values::Bool(Vec::new()),
        d if d.is_floating_point() => Values::Float(Vec::new()),
        _ => Values::Int(Vec::new()),
    };
    let Some((&last, lead)) = sizes.split_last() else {
        read(t, &mut out)?;
        return Ok(out);
    };
    let last_stride = strides[strides.len() - 1];
    let lead_shown: Vec<Vec<i64>> = lead.iter().map(|&n| shown(n, summarize)).collect();
    // Every combination of the shown leading indices, in row-major order.
    let mut idx = vec![0usize; lead.len()];
    loop {
        let base =
            t.storage_offset() + lead_shown.iter().zip(&idx).zip(&strides).map(|((s, &i), st)| s[i] * st).sum::<i64>();
        if summarize && last > 2 * EDGE_ITEMS {
            read(&t.alias_with_layout(&[EDGE_ITEMS], &[last_stride], base)?, &mut out)?;
            let tail = base + (last - EDGE_ITEMS) * last_stride;
            read(&t.alias_with_layout(&[EDGE_ITEMS], &[last_stride], tail)?, &mut out)?;
        } else {
            read(&t.alias_with_layout(&[last], &[last_stride], base)?, &mut out)?;
        }
        // The next combination; done after the last.
        let mut d = idx.len();
        loop {
            if d == 0 {
                return Ok(out);
            }
            d -= 1;
            idx[d] += 1;
            if idx[d] < lead_shown[d].len() {
                break;
            }
            idx[d] = 0;
        }
    }
}

/// Python's `{:.4e}`: at least two exponent digits, with a sign.
fn sci(v: f64) -> String {
    if !v.is_finite() {
        return special(v);
    }
    let s = format!("{v:.PRECISION$e}");
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    format!("{mantissa}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
}

fn special(v: f64) -> String {
    if v.is_nan() {
        "nan".into()
    } else if v > 0.0 {
        "inf".into()
    } else {
        "-inf".into()
    }
}

/// How every element of one tensor is written (PyTorch's `_Formatter`).
struct Formatter {
    kind: Kind,
    width: usize,
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Fixed,
    Integral,
    Scientific,
    Exact,
}

impl Formatter {
    fn new(values: &Values) -> Formatter {
        match values {
            Values::Int(v) => {
                Formatter { kind: Kind::Exact, width: v.iter().map(|x| x.to_string().len()).max().unwrap_or(1) }
            }
            Values::Bool(v) => Formatter { kind: Kind::Exact, width: if v.contains(&false) { 5 } else { 4 } },
            Values::Float(v) => {
                let nonzero: Vec<f64> = v.iter().copied().filter(|x| x.is_finite() && *x != 0.0).collect();
                if nonzero.is_empty() {
                    // PyTorch leaves the width at 1 when nothing is finite and non-zero.
                    return Formatter { kind: Kind::Integral, width: 1 };
                }
                let (min, max) =
                    nonzero.iter().fold((f64::INFINITY, 0f64), |(lo, hi), x| (lo.min(x.abs()), hi.max(x.abs())));
                let integral = nonzero.iter().all(|x| x.ceil() == *x);
                let wide = max / min > 1000.0 || max > 1e8;
                let kind = match (integral, wide || (!integral && min < 1e-4)) {
                    (_, true) => Kind::Scientific,
                    (true, false) => Kind::Integral,
                    (false, false) => Kind::Fixed,
                };
                let f = Formatter { kind, width: 1 };
                let width = nonzero.iter().map(|&x| f.bare(x).len()).max().unwrap_or(1);
                Formatter { kind, width }
            }
        }
    }

    /// A float without padding.
    fn bare(&self, v: f64) -> String {
        match self.kind {
            Kind::Scientific => sci(v),
            Kind::Integral if !v.is_finite() => special(v),
            Kind::Integral => format!("{v:.0}."),
            Kind::Fixed if !v.is_finite() => special(v),
            Kind::Fixed | Kind::Exact => format!("{v:.PRECISION$}"),
        }
    }

    fn float(&self, v: f64) -> String {
        format!("{:>w$}", self.bare(v), w = self.width)
    }

    fn value(&self, values: &Values, i: usize) -> String {
        match values {
            Values::Float(v) => self.float(v[i]),
            Values::Int(v) => format!("{:>w$}", v[i], w = self.width),
            Values::Bool(v) => format!("{:>w$}", if v[i] { "True" } else { "False" }, w = self.width),
        }
    }
}

/// Writes the grid of shown values: `dims` are the shown counts per dimension, `split` whether a
/// dimension was summarised (an `...` goes in its middle).
struct Printer<'a> {
    values: &'a Values,
    formatter: Formatter,
    dims: Vec<usize>,
    split: Vec<bool>,
}

impl Printer<'_> {
    /// The nested list of dimension `d` onwards, starting at value `first`.
    fn list(&self, d: usize, first: usize, indent: usize) -> String {
        let inner: usize = self.dims[d + 1..].iter().product();
        let n = self.dims[d];
        let half = if self.split[d] { n / 2 } else { n };
        if d + 1 == self.dims.len() {
            let mut items: Vec<String> = (0..n).map(|i| self.formatter.value(self.values, first + i)).collect();
            if self.split[d] {
                items.insert(half, " ...".into());
            }
            let per_line = ((LINE_WIDTH.saturating_sub(indent)) / (self.formatter.width + 2)).max(1);
            let lines: Vec<String> = items.chunks(per_line).map(|l| l.join(", ")).collect();
            return format!("[{}]", lines.join(&format!(",\n{}", " ".repeat(indent + 1))));
        }
        let mut slices: Vec<String> = (0..n).map(|i| self.list(d + 1, first + i * inner, indent + 1)).collect();
        if self.split[d] {
            slices.insert(half, "...".into());
        }
        let rest = self.dims.len() - d;
        format!("[{}]", slices.join(&format!(",{}{}", "\n".repeat(rest - 1), " ".repeat(indent + 1))))
    }
}

/// PyTorch's `_add_suffixes`: a suffix that would pass the line width goes on a line of its own.
fn add_suffixes(mut text: String, suffixes: &[String], indent: usize) -> String {
    // Python's `len(s) - s.rfind("\n") + 1`, whose -1 for "no newline" counts too.
    let newline = text.rfind('\n').map_or(-1, |i| i as isize);
    let mut last_line = (text.len() as isize - newline + 1) as usize;
    for s in suffixes {
        if last_line + s.len() + 2 > LINE_WIDTH {
            text.push_str(&format!(",\n{}{s}", " ".repeat(indent)));
            last_line = indent + s.len();
        } else {
            text.push_str(&format!(", {s}"));
            last_line += s.len() + 2;
        }
    }
    text.push(')');
    text
}

fn body(t: &Tensor) -> crate::Result<String> {
    const INDENT: usize = "tensor(".len();
    if t.numel() == 0 {
        return Ok("[]".into());
    }
    let summarize = t.numel() > THRESHOLD;
    let values = gather(t, summarize)?;
    let formatter = Formatter::new(&values);
    if t.dim() == 0 {
        return Ok(formatter.value(&values, 0));
    }
    let dims = t.sizes().iter().map(|&n| shown(n, summarize).len()).collect();
    let split = t.sizes().iter().map(|&n| summarize && n > 2 * EDGE_ITEMS).collect();
    Ok(Printer { values: &values, formatter, dims, split }.list(0, 0, INDENT))
}

impl fmt::Display for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut suffixes = Vec::new();
        if self.device() != Device::Cpu {
            suffixes.push(format!("device='{}'", self.device()));
        }
        let text = if self.device() == Device::Meta {
            suffixes.push(format!("size={}", tuple(&self.sizes())));
            "...".to_string()
        } else {
            // A device tensor prints from a host copy (one with no copy prints as meta does).
            let host = if self.device() == Device::Cpu { Ok(self.clone()) } else { self.try_to_device(Device::Cpu) };
            match host.and_then(|h| body(&h)) {
                Ok(text) => {
                    if self.numel() == 0 && self.dim() != 1 {
                        suffixes.push(format!("size={}", tuple(&self.sizes())));
                    }
                    text
                }
                Err(_) => {
                    suffixes.push(format!("size={}", tuple(&self.sizes())));
                    "...".to_string()
                }
            }
        };
        if !matches!(self.dtype(), DType::F32 | DType::I64 | DType::Bool) {
            suffixes.push(format!("dtype={}", self.dtype()));
        }
        if let Some(node) = self.grad_fn() {
            suffixes.push(format!("grad_fn=<{}>", node.name()));
        } else if self.requires_grad() {
            suffixes.push("requires_grad=True".into());
        }
        f.write_str(&add_suffixes(format!("tensor({text}"), &suffixes, "tensor(".len()))
    }
}

/// `(2, 3)` as Python writes a tuple (`(2,)` for one element).
fn tuple(sizes: &[i64]) -> String {
    match sizes {
        [one] => format!("({one},)"),
        _ => format!("({})", sizes.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")),
    }
}
