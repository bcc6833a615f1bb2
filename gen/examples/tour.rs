//! A tour of oxten's API: the README's main command.
//!
//! ```text
//! cargo run --release -p oxten --example tour [N]
//! ```
//! Builds an N×N problem (N defaults to 512), runs elementwise ops, broadcasting, type
//! promotion, views, reductions, channels-last propagation and meta tensors, and prints what it
//! found, timing each step.

use oxten::{DType, Device, MemoryFormat};
use std::time::Instant;

fn step<T>(name: &str, f: impl FnOnce() -> oxten::Result<T>) -> T {
    let t0 = Instant::now();
    match f() {
        Ok(v) => {
            println!("  {name:<44} {:>9.3} ms", t0.elapsed().as_secs_f64() * 1e3);
            v
        }
        Err(e) => {
            eprintln!("error in {name}: {e}");
            std::process::exit(1);
        }
    }
}

/// A tour of oxten's API, timing each step.
#[derive(clap::Parser)]
struct Args {
    /// The problem's side: N×N matrices.
    #[arg(default_value_t = 512, value_parser = clap::value_parser!(i64).range(1..=1 << 15))]
    n: i64,
}

fn main() {
    let n = <Args as clap::Parser>::parse().n;
    println!("oxten tour on a {n}x{n} problem");

    let x = step("arange + view (N*N floats)", || {
        oxten::try_arange_with(n * n, oxten::options::ArangeOpts { dtype: Some(DType::F32), ..Default::default() })?
            .try_view(&[n, n])
    });
    let y = step("sin(x / N) * 2 - 1", || x.try_div_scalar(n)?.try_sin()?.try_mul_scalar(2.0)?.try_sub_scalar(1.0));
    let bias = step("broadcast add of a row vector", || {
        let row = oxten::try_arange(n)?.try_to_dtype(DType::F32)?;
        y.try_add(&row)
    });
    let t = step("transpose + contiguous add", || bias.try_t()?.try_add(&bias));
    let total = step("sum over everything", || t.try_sum()?.item::<f32>());
    println!("    sum = {total:.3}");
    let (vals, idx) = step("max over dim 1 (values, indices)", || t.try_max_dim(1, false));
    println!(
        "    first row max = {:.3} at column {}",
        vals.to_vec::<f32>().unwrap()[0],
        idx.to_vec::<i64>().unwrap()[0]
    );
    let m = step("mean over dim 0 with keepdim", || {
        t.try_mean_dim_with(Some(&[0]), true, oxten::options::MeanDimOpts { dtype: None })
    });
    println!("    mean shape = {:?}", &m.sizes()[..]);

    // Type promotion: int tensor + float scalar is a float tensor; f16 stays f16.
    let ints = oxten::arange(5);
    let promoted = step("int64 tensor * 2.5 (promotes)", || ints.try_mul_scalar(2.5));
    println!("    {promoted}");
    let half = step("float16 gelu", || ints.try_to_dtype(DType::F16)?.try_gelu());
    println!("    {half}");

    // channels_last propagates through elementwise ops.
    let img = step("channels_last relu(x) + x", || {
        let a = oxten::try_ones(&[2, 8, 16, 16])?
            .try_contiguous_with(oxten::options::ContiguousOpts { memory_format: MemoryFormat::ChannelsLast })?;
        a.try_relu()?.try_add(&a)
    });
    println!("    output is channels_last: {}", img.is_contiguous_as(MemoryFormat::ChannelsLast));

    // Meta tensors: shapes and dtypes without data.
    let meta = step("meta: [3,1] int32 + [1,4] float32", || {
        let a = oxten::try_empty_with(
            &[3, 1],
            oxten::options::EmptyOpts { dtype: Some(DType::I32), device: Some(Device::Meta), ..Default::default() },
        )?;
        let b = oxten::try_empty_with(
            &[1, 4],
            oxten::options::EmptyOpts { device: Some(Device::Meta), ..Default::default() },
        )?;
        a.try_add(&b)
    });
    println!("    meta result: sizes {:?}, dtype {}, device {}", &meta.sizes()[..], meta.dtype(), meta.device());

    // Autograd from derivatives.yaml: d/dx sum(exp(x * y)) = y * exp(x * y).
    let (gx, g2) = step("autograd: d sum(exp(x*y)), then d2 of x^3", || {
        let x = oxten::Tensor::from_vec(vec![0.5f64, 0.75], &[2])?.try_requires_grad_(true)?;
        let y = oxten::Tensor::from_vec(vec![0.1f64, 0.9], &[2])?;
        let z = x.try_mul(&y)?.try_exp()?.try_sum()?;
        z.try_backward()?;
        // Second derivative of x^3 at 2 through create_graph: 6x = 12.
        let a = oxten::Tensor::from_vec(vec![2.0f64], &[1])?.try_requires_grad_(true)?;
        let cube = a.try_mul(&a)?.try_mul(&a)?.try_sum()?;
        let g = oxten::autograd::grad_with(
            &[cube],
            &[&a],
            oxten::autograd::GradOpts { create_graph: true, ..Default::default() },
        )?
        .remove(0)
        .expect("used");
        let gg = oxten::autograd::grad(&[g.try_sum()?], &[a])?.remove(0).expect("used");
        Ok((x.grad().expect("leaf grad").to_vec::<f64>()?, gg.item::<f64>()?))
    });
    println!("    x.grad = [{:.4}, {:.4}], d2(x^3)/dx2 at 2 = {g2}", gx[0], gx[1]);

    // Errors name the operator and what is wrong.
    let err = oxten::ones(&[2, 3]).try_add(&oxten::ones(&[4])).unwrap_err();
    println!("  a broadcasting mistake reads: {err}");
}
