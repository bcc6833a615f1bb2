//! Sizes, strides, offsets and counts that overflow `i64` or ask for more memory than exists give
//! errors, never a crash, an abort or a tensor of the wrong size.
//!
//! Each case runs in a child process (this test binary, re-run with `OXTEN_OVERFLOW_CASE` set),
//! so that a segfault or an abort is a test failure with the case's name rather than a lost run.

use oxten::options::{AsStridedOpts, Conv2dOpts, MaxPool2dOpts};
use oxten::{ErrorKind, Scalar, Tensor};
use std::process::Command;

const ENV: &str = "OXTEN_OVERFLOW_CASE";

fn t3() -> Tensor {
    Tensor::from_vec(vec![1.0f32, 2.0, 3.0], &[3]).unwrap()
}

/// Cases whose right answer is a result (PyTorch clamps slice bounds, a huge pooling stride
/// gives one window, an empty reduction gives an empty result), with the sizes it must have.
/// Every other case must give an error.
const OK_CASES: [(&str, &str); 3] =
    [("slice_huge_bounds", "[1]"), ("max_pool2d_huge_stride", "[1, 1, 1, 1]"), ("argmin_empty_huge", "[0, 3]")];

/// A named call whose result the child prints.
type Case = (&'static str, Box<dyn Fn() -> oxten::Result<String>>);

/// Every case returns the call's result; the child prints `ERR <kind> <message>` or `OK ...`.
fn cases() -> Vec<Case> {
    let sizes = |t: Tensor| format!("{:?}", &t.sizes()[..]);
    vec![
        ("zeros_2e31_squared", Box::new(move || oxten::try_zeros(&[1 << 31, 1 << 31]).map(sizes))),
        ("zeros_numel_overflow", Box::new(move || oxten::try_zeros(&[1 << 40, 1 << 40]).map(sizes))),
        ("zeros_three_dims_wrap_to_zero", Box::new(move || oxten::try_zeros(&[1 << 32, 1 << 32, 4]).map(sizes))),
        ("empty_strided_span", Box::new(move || oxten::try_empty_strided(&[1 << 62, 4], &[1, 1 << 62]).map(sizes))),
        ("as_strided_huge_stride", Box::new(move || t3().try_as_strided(&[5], &[1 << 62]).map(sizes))),
        (
            "as_strided_offset_max",
            Box::new(move || {
                t3().try_as_strided_with(&[1], &[1], AsStridedOpts { storage_offset: Some(i64::MAX) }).map(sizes)
            }),
        ),
        (
            "as_strided_past_storage",
            Box::new(move || {
                t3().try_as_strided_with(&[2], &[1], AsStridedOpts { storage_offset: Some(2) }).map(sizes)
            }),
        ),
        ("expand_numel_overflow", Box::new(move || Tensor::scalar(1.0f32).try_expand(&[1 << 40, 1 << 40]).map(sizes))),
        ("view_numel_overflow", Box::new(move || t3().try_view(&[-1, 1 << 62, 4]).map(sizes))),
        (
            "resize_to_max",
            Box::new(move || {
                let t = t3();
                t.resize_(&[i64::MAX], oxten::MemoryFormat::Contiguous).map(|()| sizes(t))
            }),
        ),
        ("from_vec_sizes_wrap", Box::new(move || Tensor::from_vec(Vec::<f32>::new(), &[1 << 32, 1 << 32]).map(sizes))),
        ("randperm_2e62", Box::new(move || oxten::try_randperm(1 << 62).map(sizes))),
        ("arange_2e62", Box::new(move || oxten::try_arange(Scalar::from(1i64 << 62)).map(sizes))),
        ("full_2e62", Box::new(move || oxten::try_full(&[1 << 62], 1.0).map(sizes))),
        (
            "chunk_huge",
            Box::new(move || oxten::try_zeros(&[0]).and_then(|z| z.try_chunk(1 << 62, 0)).map(|v| v.len().to_string())),
        ),
        (
            "split_empty_huge_dim",
            Box::new(move || {
                let t = Tensor::empty_strided(&[1 << 40, 0], &[1, 1], oxten::DType::F32, oxten::Device::Cpu)?;
                t.try_split(1, 0).map(|v| v.len().to_string())
            }),
        ),
        (
            "to_vec_of_huge_expanded_view",
            Box::new(move || {
                Tensor::scalar(1.0f32).try_expand(&[1 << 40, 1 << 20])?.to_vec::<f32>().map(|v| v.len().to_string())
            }),
        ),
        ("repeat_overflow", Box::new(move || t3().try_repeat(&[1 << 62]).map(sizes))),
        ("slice_huge_bounds", Box::new(move || t3().try_slice(0, Some(i64::MIN), Some(i64::MAX), i64::MAX).map(sizes))),
        ("narrow_overflow", Box::new(move || t3().try_narrow(0, i64::MAX, 2).map(sizes))),
        (
            "conv2d_huge_padding",
            Box::new(move || {
                let x = oxten::ones(&[1, 1, 3, 3]);
                let w = oxten::ones(&[1, 1, 1, 1]);
                let p = [i64::MAX / 2, i64::MAX / 2];
                oxten::try_conv2d(&x, &w, None, &[1, 1], &p).map(sizes)
            }),
        ),
        (
            "conv2d_huge_dilation",
            Box::new(move || {
                let x = oxten::ones(&[1, 1, 3, 3]);
                let w = oxten::ones(&[1, 1, 2, 2]);
                let d = [i64::MAX, 1];
                oxten::try_conv2d_with(
                    &x,
                    &w,
                    None,
                    &[1, 1],
                    &[0, 0],
                    Conv2dOpts { dilation: &d, ..Default::default() },
                )
                .map(sizes)
            }),
        ),
        (
            "max_pool2d_huge_stride",
            Box::new(move || {
                let x = oxten::ones(&[1, 1, 4, 4]);
                let s = [i64::MAX, i64::MAX];
                oxten::try_max_pool2d_with(&x, &[2, 2], MaxPool2dOpts { stride: &s, ..Default::default() }).map(sizes)
            }),
        ),
        (
            "group_norm_counts_wrap",
            Box::new(move || {
                let x = oxten::ones(&[0, 4]);
                oxten::try_native_group_norm(&x, None, None, 1 << 20, 1 << 21, 1 << 23, 1, 1e-5).map(|r| sizes(r.0))
            }),
        ),
        (
            "argmin_empty_huge",
            Box::new(move || {
                let t = Tensor::empty_strided(&[0, 1 << 40, 3], &[1, 1, 1], oxten::DType::F32, oxten::Device::Cpu)?;
                t.try_argmin(Some(1), false).map(sizes)
            }),
        ),
    ]
}

/// The child side: runs one case when the environment names it, else does nothing.
#[test]
fn child_case() {
    let Ok(name) = std::env::var(ENV) else { return };
    oxten::init();
    let (_, f) = cases().into_iter().find(|(n, _)| *n == name).expect("a known case");
    match f() {
        Ok(s) => println!("RESULT OK {s}"),
        Err(e) => println!("RESULT ERR {:?} {e}", e.kind),
    }
}

fn run_child(name: &str) -> (Option<i32>, String) {
    let out = Command::new(std::env::current_exe().expect("the test binary"))
        .args(["--exact", "child_case", "--nocapture", "--test-threads=1"])
        .env(ENV, name)
        .output()
        .expect("spawn the test binary");
    let stdout = String::from_utf8_lossy(&out.stdout);
    // The harness may print `test child_case ... ` on the same line.
    let line = stdout.lines().find_map(|l| l.split_once("RESULT ").map(|(_, r)| r.to_string()));
    match line {
        Some(line) => (out.status.code(), line),
        None => (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned()),
    }
}

#[test]
fn huge_sizes_give_errors_in_child_processes() {
    let mut failures = Vec::new();
    for (name, _) in cases() {
        let (code, line) = run_child(name);
        let want = OK_CASES.iter().find(|(n, _)| *n == name).map(|(_, sizes)| format!("OK {sizes}"));
        if code != Some(0) {
            failures.push(format!("{name}: the child crashed (exit {code:?}): {line}"));
        } else if let Some(want) = want {
            if line != want {
                failures.push(format!("{name}: expected {want}, got {line}"));
            }
        } else if !line.starts_with("ERR ") {
            failures.push(format!("{name}: expected an error, got {line}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The messages and kinds of a few, checked in this process (they do not crash any more).
#[test]
fn overflow_messages_name_the_problem() {
    oxten::init();
    let e = oxten::try_zeros(&[1 << 40, 1 << 40]).unwrap_err();
    assert_eq!(e.op, "zeros");
    assert!(e.message.contains("does not fit in int64"), "{e}");
    let e = oxten::try_zeros(&[1 << 31, 1 << 31]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::OutOfMemory, "{e}");
    let e = t3().try_as_strided(&[5], &[1 << 62]).unwrap_err();
    assert_eq!(e.op, "as_strided");
    assert!(e.message.contains("reaches past the largest int64 element index"), "{e}");
    let e = t3().try_as_strided_with(&[2], &[1], AsStridedOpts { storage_offset: Some(2) }).unwrap_err();
    assert!(e.message.contains("requiring a storage size of 16 are out of bounds for storage of size 12"), "{e}");
    let e = oxten::try_randperm(1 << 62).unwrap_err();
    assert_eq!((e.op.as_str(), e.kind), ("randperm", ErrorKind::OutOfMemory), "{e}");
    let e = Tensor::scalar(1.0f32).try_expand(&[1 << 40, 1 << 20]).unwrap().to_vec::<f32>().unwrap_err();
    assert_eq!(e.kind, ErrorKind::OutOfMemory, "{e}");
}

/// Errors name the operator the user called, then the operators on the way to the one that
/// raised it (PyTorch's message follows).
#[test]
fn errors_name_the_called_op() {
    oxten::init();
    let e = oxten::try_zeros(&[-1]).unwrap_err();
    assert_eq!((e.op.as_str(), e.origin()), ("zeros", "empty.memory_format"));
    assert_eq!(e.to_string(), "zeros: empty.memory_format: Trying to create tensor with negative dimension -1: [-1]");
    let x = oxten::ones(&[2, 2]);
    let w = oxten::ones(&[3, 3]);
    let e = oxten::try_linear(&x, &w, None).unwrap_err();
    assert_eq!(e.op, "linear");
    assert!(e.to_string().ends_with("mm: mat1 and mat2 shapes cannot be multiplied (2x2 and 3x3)"), "{e}");
    let e = x.try_logsumexp(&[5], false).unwrap_err();
    assert_eq!(e.op, "logsumexp");
    assert!(e.message.starts_with("Dimension out of range"), "{e}");
    let e = oxten::try_cat(&[] as &[Tensor], 0).unwrap_err();
    assert_eq!(e.to_string(), "cat: expected a non-empty list of Tensors for argument 'tensors'");
    let e = oxten::try_stack(&[] as &[Tensor], 0).unwrap_err();
    assert_eq!(e.op, "stack");
    // An error raised by the called op itself has no inner ops.
    let e = x.try_sum_dim_intlist(Some(&[7]), false).unwrap_err();
    assert!(e.inner.is_empty() && e.op == "sum.dim_IntList", "{e:?}");
}

/// scatter's index checks happen in forward, before anything is written.
#[test]
fn scatter_checks_index_up_front() {
    oxten::init();
    let x = oxten::zeros(&[2, 2]);
    let src = oxten::ones(&[2, 2]);
    let float_index = oxten::zeros(&[1, 2]);
    let e = x.try_scatter_src(0, &float_index, &src).unwrap_err();
    assert!(e.message.contains("Expected dtype int32/int64 for index"), "{e}");
    let e = x.try_scatter_add(0, &float_index, &src).unwrap_err();
    assert!(e.message.contains("Expected dtype int32/int64 for index"), "{e}");
    let index = Tensor::from_vec(vec![0i64, 1], &[1, 2]).unwrap();
    let e = x.try_scatter_src(0, &index, &Tensor::scalar(1.0f32)).unwrap_err();
    assert_eq!(e.message, "Index tensor must have the same number of dimensions as src tensor");
    let e = x.try_scatter_add(0, &index.view(&[2]), &src).unwrap_err();
    assert_eq!(e.message, "Index tensor must have the same number of dimensions as self tensor");
}

/// An `out=` tensor that is also an input is not resized under the kernel (the issue's `mv`
/// panic): an error when it would have to be; the usual in-place-like use still works.
#[test]
fn out_tensors_that_are_inputs_are_not_resized_before_they_are_read() {
    oxten::init();
    let a = oxten::ones(&[4, 2]);
    let v = oxten::ones(&[2]);
    let e = oxten::try_mv_out(&a, &v, &a).unwrap_err();
    assert_eq!((e.op.as_str(), e.kind), ("mv.out", ErrorKind::Overlap), "{e}");
    assert_eq!(a.sizes(), [4, 2]);
    // Structured kernels: mm.out whose out is `self` of another shape.
    let b = oxten::ones(&[2, 3]);
    let sq = oxten::ones(&[2, 2]);
    let e = oxten::try_mm_out(&sq, &b, &sq).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Overlap, "{e}");
    assert!(e.message.contains("is also an input"), "{e}");
    // Same shape: allowed, as in PyTorch (`torch.add(x, x, out=x)`).
    let x = Tensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap();
    oxten::try_add_out(&x, &x, &x).unwrap();
    assert_eq!(x.to_vec::<f32>().unwrap(), [2.0, 4.0]);
}
