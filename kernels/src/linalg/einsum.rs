//! `einsum`: a composite that plans an Einstein-summation equation into views, sums and batched
//! matrix products, so autograd, double backward and every backend come from those operators.
//!
//! The plan, for operands `x₀ … xₙ₋₁`:
//!
//! 1. Parse the equation (letters `a-zA-Z`, at most one `...` per term, an optional `->` output;
//!    without one the output is the ellipsis dims then the letters used once, alphabetically).
//! 2. Give every label one *global* axis: the output's axes first, in output order, then the
//!    summed labels. Each operand becomes a view with all global axes (`permute` plus size-1
//!    axes for labels it lacks; a label repeated within an operand takes the diagonal, a view
//!    with the strides added). Ellipsis axes broadcast right-aligned, as in PyTorch.
//! 3. Fold the operands left to right. Before each step, axes to be summed that only one side
//!    has (or where the other side has size 1) are summed away; the axes both sides have are
//!    contracted by one `bmm` over `[batch, lhs, sum] @ [batch, sum, rhs]`.
//! 4. The summed axes are now size 1 at the end; a `reshape` leaves the output.
//!
//! `path` (PyTorch's opt_einsum contraction order) is accepted and ignored: operands are
//! contracted left to right.

use crate::generated::decls::EinsumCompositeImplicit;
use crate::Composite;
use oxten_runtime::{ops, Error, Result, Tensor};

/// One label of a term: a letter, or one of the ellipsis's dims.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Label {
    Letter(u8),
    /// The `k`-th ellipsis dim counted from the right (0 = innermost), so ellipses of different
    /// lengths line up as broadcasting does.
    Ellipsis(usize),
}

/// A parsed term (`ij`, `...k`): its letters before and after the ellipsis.
#[derive(Debug, Default)]
struct Term {
    before: Vec<u8>,
    ellipsis: bool,
    after: Vec<u8>,
}

impl Term {
    fn letters(&self) -> impl Iterator<Item = u8> + '_ {
        self.before.iter().chain(self.after.iter()).copied()
    }
    fn n_letters(&self) -> usize {
        self.before.len() + self.after.len()
    }
    /// The labels of an operand with `ndim` dims, in dim order.
    fn labels(&self, ndim: usize) -> Vec<Label> {
        let n_ell = ndim - self.n_letters();
        let mut v: Vec<Label> = self.before.iter().map(|&c| Label::Letter(c)).collect();
        v.extend((0..n_ell).rev().map(Label::Ellipsis));
        v.extend(self.after.iter().map(|&c| Label::Letter(c)));
        v
    }
}

fn invalid(msg: impl Into<String>) -> Error {
    Error::value(format!("einsum(): {}", msg.into()))
}

/// Parses one term starting at byte `offset` of the equation (for error positions).
fn parse_term(s: &str, offset: usize) -> Result<Term> {
    let b = s.as_bytes();
    let mut t = Term::default();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'.' {
            if t.ellipsis || !s[i..].starts_with("...") {
                return Err(invalid("found '.' for operand that is not part of any ellipsis"));
            }
            t.ellipsis = true;
            i += 3;
            continue;
        }
        if c == b' ' {
            i += 1;
            continue;
        }
        if !c.is_ascii_alphabetic() {
            return Err(invalid(format!(
                "invalid subscript given at index {} in the equation string, subscripts must be in [a-zA-Z]",
                offset + i
            )));
        }
        if t.ellipsis {
            t.after.push(c);
        } else {
            t.before.push(c);
        }
        i += 1;
    }
    Ok(t)
}

/// The plan's view of one operand: `t` with every global axis (size 1 where the operand lacks
/// the label).
fn align(t: &Tensor, term: &Term, index: usize, axes: &[Label]) -> Result<Tensor> {
    let ndim = t.dim();
    if !term.ellipsis && term.n_letters() != ndim {
        return Err(invalid(format!(
            "the number of subscripts in the equation ({}) does not match the number of dimensions ({ndim}) for operand {index} and no ellipsis was given",
            term.n_letters()
        )));
    }
    if term.ellipsis && term.n_letters() > ndim {
        return Err(invalid(format!(
            "the number of subscripts in the equation ({}) is more than the number of dimensions ({ndim}) for operand {index}",
            term.n_letters()
        )));
    }
    let labels = term.labels(ndim);
    let (sizes, strides) = (t.sizes(), t.strides());
    // Per global axis: size and stride (strides of repeated labels add up: the diagonal).
    let mut out_sizes = vec![1i64; axes.len()];
    let mut out_strides = vec![0i64; axes.len()];
    let mut seen = vec![false; axes.len()];
    let mut repeated = false;
    for (d, l) in labels.iter().enumerate() {
        let g = axes.iter().position(|a| a == l).expect("every label has an axis");
        if seen[g] {
            repeated = true;
            if out_sizes[g] != sizes[d] {
                let Label::Letter(c) = l else { unreachable!("ellipsis dims are distinct") };
                return Err(invalid(format!(
                    "subscript {} is repeated for operand {index} but the sizes don't match, {} != {}",
                    *c as char, sizes[d], out_sizes[g]
                )));
            }
            out_strides[g] += strides[d];
        } else {
            seen[g] = true;
            out_sizes[g] = sizes[d];
            out_strides[g] = strides[d];
        }
    }
    if repeated {
        // The diagonal: a view of the same storage with the repeated dims' strides added.
        return ops::as_strided::call(t, &out_sizes, &out_strides, Some(t.storage_offset()));
    }
    // permute the operand's dims into global order, then insert the missing axes.
    let order: Vec<usize> = {
        let mut o: Vec<(usize, usize)> =
            labels.iter().enumerate().map(|(d, l)| (axes.iter().position(|a| a == l).unwrap(), d)).collect();
        o.sort_unstable();
        o.into_iter().map(|(_, d)| d).collect()
    };
    let perm: Vec<i64> = order.iter().map(|&d| d as i64).collect();
    let mut v = t.try_permute(&perm)?;
    for (g, present) in seen.iter().enumerate() {
        if !present {
            v = v.try_unsqueeze(g as i64)?;
        }
    }
    Ok(v)
}

/// Sums `t` over `axes` keeping them (as size 1).
fn sum_keep(t: &Tensor, axes: &[usize]) -> Result<Tensor> {
    if axes.is_empty() {
        return Ok(t.clone());
    }
    let dims: Vec<i64> = axes.iter().map(|&a| a as i64).collect();
    ops::sum_dim_intlist::call(t, Some(&dims), true, None)
}

/// Multiplies `a` and `b` (both with every global axis) and sums over `summed` axes, with one
/// `bmm`.
fn contract(a: &Tensor, b: &Tensor, summed: &[bool]) -> Result<Tensor> {
    let n = summed.len();
    let (sa, sb) = (a.sizes(), b.sizes());
    // A summed axis only one side has is summed on that side first.
    let only_a: Vec<usize> = (0..n).filter(|&g| summed[g] && sa[g] != 1 && sb[g] == 1).collect();
    let only_b: Vec<usize> = (0..n).filter(|&g| summed[g] && sb[g] != 1 && sa[g] == 1).collect();
    let a = sum_keep(a, &only_a)?;
    let b = sum_keep(b, &only_b)?;
    let (sa, sb) = (a.sizes(), b.sizes());
    let (mut batch, mut lhs, mut rhs, mut sum) = (vec![], vec![], vec![], vec![]);
    for g in 0..n {
        match (summed[g], sa[g] != 1, sb[g] != 1) {
            (true, true, true) => sum.push(g),
            (true, _, _) => lhs.push(g), // size 1 on both sides now
            (false, true, true) => batch.push(g),
            (false, true, false) => lhs.push(g),
            (false, false, true) => rhs.push(g),
            (false, false, false) => batch.push(g),
        }
    }
    let size = |s: &[i64], axes: &[usize]| axes.iter().map(|&g| s[g]).product::<i64>();
    let (bs, ls, ss, rs) = (size(&sa, &batch), size(&sa, &lhs), size(&sa, &sum), size(&sb, &rhs));
    let perm_a: Vec<i64> = batch.iter().chain(&lhs).chain(&sum).chain(&rhs).map(|&g| g as i64).collect();
    let perm_b: Vec<i64> = batch.iter().chain(&sum).chain(&rhs).chain(&lhs).map(|&g| g as i64).collect();
    let a3 = a.try_permute(&perm_a)?.try_reshape(&[bs, ls, ss])?;
    let b3 = b.try_permute(&perm_b)?.try_reshape(&[bs, ss, rs])?;
    let product = a3.try_bmm(&b3)?;
    // Back to every global axis: [batch, lhs, rhs] sizes, the summed axes as 1, then permuted.
    let order: Vec<usize> = batch.iter().chain(&lhs).chain(&rhs).chain(&sum).copied().collect();
    let shape: Vec<i64> = order
        .iter()
        .map(|&g| {
            if sum.contains(&g) {
                1
            } else if rhs.contains(&g) || sa[g] == 1 {
                sb[g]
            } else {
                sa[g]
            }
        })
        .collect();
    let expanded = product.try_reshape(&shape)?;
    let mut inverse = vec![0i64; n];
    for (pos, &g) in order.iter().enumerate() {
        inverse[g] = pos as i64;
    }
    expanded.try_permute(&inverse)
}

impl EinsumCompositeImplicit for Composite {
    fn einsum(equation: &str, tensors: &[Tensor], _path: Option<&[i64]>) -> Result<Tensor> {
        let (lhs, rhs) = match equation.split_once("->") {
            Some((l, r)) => (l, Some(r)),
            None => (equation, None),
        };
        let mut terms = Vec::new();
        let mut offset = 0;
        for part in lhs.split(',') {
            terms.push(parse_term(part, offset)?);
            offset += part.len() + 1;
        }
        if terms.len() < tensors.len() {
            return Err(invalid("more operands were provided than specified in the equation"));
        }
        if terms.len() > tensors.len() {
            return Err(invalid("fewer operands were provided than specified in the equation"));
        }
        // The ellipsis covers the most dims any operand gives it.
        let mut n_ell = 0;
        for (i, (term, t)) in terms.iter().zip(tensors).enumerate() {
            if term.ellipsis && term.n_letters() <= t.dim() {
                n_ell = n_ell.max(t.dim() - term.n_letters());
            } else if term.ellipsis {
                return Err(invalid(format!(
                    "the number of subscripts in the equation ({}) is more than the number of dimensions ({}) for operand {i}",
                    term.n_letters(),
                    t.dim()
                )));
            }
        }
        let mut counts = [0usize; 128];
        for term in &terms {
            for c in term.letters() {
                counts[c as usize] += 1;
            }
        }
        let any_ellipsis = terms.iter().any(|t| t.ellipsis);
        // Output axes: given, or ellipsis then letters used once in ASCII order (A-Z, a-z).
        let output: Vec<Label> = match rhs {
            Some(r) => {
                let out = parse_term(r, lhs.len() + 2)?;
                let mut seen = [false; 128];
                for c in out.letters() {
                    if counts[c as usize] == 0 {
                        return Err(invalid(format!(
                            "output subscript {} does not appear in the equation for any input operand",
                            c as char
                        )));
                    }
                    if std::mem::replace(&mut seen[c as usize], true) {
                        return Err(invalid(format!(
                            "output subscript {} appears more than once in the output",
                            c as char
                        )));
                    }
                }
                let mut v: Vec<Label> = out.before.iter().map(|&c| Label::Letter(c)).collect();
                if out.ellipsis {
                    v.extend((0..n_ell).rev().map(Label::Ellipsis));
                }
                v.extend(out.after.iter().map(|&c| Label::Letter(c)));
                v
            }
            None => {
                let mut v: Vec<Label> =
                    if any_ellipsis { (0..n_ell).rev().map(Label::Ellipsis).collect() } else { vec![] };
                v.extend((0u8..128).filter(|&c| counts[c as usize] == 1).map(Label::Letter));
                v
            }
        };
        // Global axes: the output's, then every other label in order of first appearance.
        let mut axes = output.clone();
        for term in &terms {
            for l in (0..n_ell).rev().map(Label::Ellipsis).chain(term.letters().map(Label::Letter)) {
                if matches!(l, Label::Ellipsis(_)) && !term.ellipsis {
                    continue;
                }
                if !axes.contains(&l) {
                    axes.push(l);
                }
            }
        }
        let views: Vec<Tensor> = terms
            .iter()
            .zip(tensors)
            .enumerate()
            .map(|(i, (term, t))| align(t, term, i, &axes))
            .collect::<Result<_>>()?;
        // Sizes must agree or broadcast (1) across operands.
        let mut sizes = vec![1i64; axes.len()];
        for (i, v) in views.iter().enumerate() {
            for (g, &s) in v.sizes().iter().enumerate() {
                if s != 1 && sizes[g] != 1 && s != sizes[g] {
                    return Err(match axes[g] {
                        Label::Letter(c) => invalid(format!(
                            "subscript {} has size {s} for operand {i} which does not broadcast with previously seen size {}",
                            c as char, sizes[g]
                        )),
                        Label::Ellipsis(_) => invalid("operands do not broadcast with remapped shapes (original->remapped)"),
                    });
                }
                if s != 1 {
                    sizes[g] = s;
                }
            }
        }
        let n_out = output.len();
        // An axis can be summed once no later operand has it.
        let last_user = |g: usize| views.iter().rposition(|v| v.sizes()[g] != 1).unwrap_or(0);
        let mut result = views[0].clone();
        let first_only: Vec<usize> = (n_out..axes.len()).filter(|&g| last_user(g) == 0).collect();
        result = sum_keep(&result, &first_only)?;
        for (i, v) in views.iter().enumerate().skip(1) {
            let summed: Vec<bool> = (0..axes.len()).map(|g| g >= n_out && last_user(g) <= i).collect();
            result = contract(&result, v, &summed)?;
        }
        // Leftover non-output axes are size 1 now (or still need summing, for one operand).
        let rest: Vec<usize> = (n_out..axes.len()).filter(|&g| result.sizes()[g] != 1).collect();
        result = sum_keep(&result, &rest)?;
        let out_shape: Vec<i64> = (0..n_out).map(|g| result.sizes()[g]).collect();
        result.try_reshape(&out_shape)
    }
}
