//! `oxten-codegen where <op>`: every place an operator lives — its YAML entries, its derivative
//! entry, the generated items made from them (by file and line, as `oxten-codegen write` writes
//! them) and the hand-written kernels implementing its declared traits.

use crate::backend::in_tree_backends;
use crate::derivatives::Derivative;
use crate::emit::sig::OpSig;
use crate::emit::structured::StructuredOp;
use crate::emit::{decls, Generated};
use crate::yaml::NativeFunction;
use std::fmt::Write;
use std::path::Path;

/// The report for `op` (an overload name such as `gelu.out`, or a base name such as `gelu` for
/// all its overloads). `kernels_src` is the kernels crate's `src` folder, searched for the
/// `impl <Trait> for` blocks of the op's declared kernels; paths are shown relative to its
/// grandparent (the repository).
pub fn locate(
    op: &str,
    fns: &[NativeFunction],
    derivatives: &[Derivative],
    generated: &Generated,
    kernels_src: &Path,
) -> Result<String, String> {
    let wanted: Vec<&NativeFunction> =
        fns.iter().filter(|f| f.func.name.to_string() == op || f.func.name.name.base == op).collect();
    if wanted.is_empty() {
        return Err(format!("no operator named `{op}` in the YAML"));
    }
    let mut out = String::new();
    let _ = writeln!(out, "YAML:");
    for f in &wanted {
        let keys: Vec<String> = f.dispatch.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        let mut how = Vec::new();
        if f.structured {
            how.push("structured".to_string());
        }
        if let Some(d) = &f.structured_delegate {
            how.push(format!("delegates to {d}"));
        }
        if let Some(p) = &f.pointwise {
            how.push(format!("pointwise: {p}"));
        }
        if let Some(from) = &f.generated_from {
            how.push(format!("derived by `autogen:` of {from}, kernel generated"));
        }
        if !keys.is_empty() {
            how.push(keys.join(", "));
        }
        let _ = writeln!(out, "  {}  {}  [{}]", f.loc, f.func, how.join("; "));
    }
    for d in derivatives.iter().filter(|d| wanted.iter().any(|f| f.func.name.to_string() == d.name)) {
        let _ = writeln!(out, "  derivatives.yaml:{}  {} -> {}", d.line, d.name, d.node);
    }

    let sigs: Vec<OpSig> = wanted.iter().filter_map(|f| OpSig::new(f).ok()).collect();
    let structured: Vec<StructuredOp> =
        wanted.iter().filter(|f| f.structured).filter_map(|f| StructuredOp::new(f).ok()).collect();
    let decl_list = decls::collect(&sigs, &structured, &in_tree_backends(fns))?;

    // What to look for in the generated files, per overload and per declared trait.
    let mut needles: Vec<String> = Vec::new();
    for s in &sigs {
        needles.push(format!("pub mod {} {{", s.name));
        needles.push(format!("pub fn try_{}(", s.name));
        needles.push(format!("ops::{}::OP.register(", s.name));
    }
    for st in structured.iter().filter(|st| st.pointwise.is_some()) {
        needles.push(format!("pub fn {}_meta(", st.out.name));
        needles.push(format!("pub fn {}_cpu(", st.out.name));
    }
    for d in &decl_list {
        needles.push(format!("pub trait {} {{", d.trait_name));
    }
    for d in derivatives.iter().filter(|d| wanted.iter().any(|f| f.func.name.to_string() == d.name)) {
        needles.push(format!("pub struct {} {{", d.node));
    }
    let _ = writeln!(out, "generated (`oxten-codegen write <dir>` writes these files):");
    for (file, text) in &generated.files {
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            // prettyplease breaks long calls after the receiver (`ops::x::OP` / `.register(`).
            let joined = format!("{}{}", line.trim(), lines.get(i + 1).map_or("", |l| l.trim()));
            let next_has = |n: &str| lines.get(i + 1).is_some_and(|l| l.contains(n));
            if needles.iter().any(|n| line.contains(n.as_str())) {
                let _ = writeln!(out, "  {file}:{}  {}", i + 1, line.trim());
            } else if needles.iter().any(|n| joined.contains(n.as_str()) && !next_has(n)) {
                let _ = writeln!(out, "  {file}:{}  {}", i + 1, joined);
            }
        }
    }

    let root = kernels_src.canonicalize().ok().and_then(|p| p.parent()?.parent().map(Path::to_path_buf));
    let shown = |p: &Path| {
        let p = p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
        root.as_ref().and_then(|r| p.strip_prefix(r).ok()).map(Path::to_path_buf).unwrap_or(p).display().to_string()
    };
    let _ = writeln!(out, "hand-written kernels:");
    let mut found = false;
    let mut files = Vec::new();
    collect_rs(kernels_src, &mut files);
    files.sort();
    for path in files {
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        for (i, line) in text.lines().enumerate() {
            if decl_list.iter().any(|d| line.contains(&format!("impl {} for", d.trait_name))) {
                let _ = writeln!(out, "  {}:{}  {}", shown(&path), i + 1, line.trim().trim_end_matches('{').trim());
                found = true;
            }
        }
    }
    if !found {
        let _ = writeln!(out, "  none (generated or composite through other operators)");
    }
    Ok(out)
}

/// Every `.rs` file under `path` (or `path` itself, a file), parsed; errors name the file.
pub(crate) fn parse_rs_files(path: &Path) -> Result<Vec<(std::path::PathBuf, syn::File)>, String> {
    let mut paths = Vec::new();
    if path.is_dir() {
        collect_rs(path, &mut paths);
    } else {
        paths.push(path.to_path_buf());
    }
    paths
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
            let file = syn::parse_file(&text).map_err(|e| format!("{}: {e}", p.display()))?;
            Ok((p, file))
        })
        .collect()
}

/// Every `.rs` file under `dir`.
pub(crate) fn collect_rs(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect_rs(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}
