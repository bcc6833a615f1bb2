//! `oxten-codegen`: run the generator from the command line.
//!
//! ```text
//! cargo run -p oxten-codegen -- check [native_functions.yaml]
//! cargo run -p oxten-codegen -- write <dir> [native_functions.yaml]
//! cargo run -p oxten-codegen -- stubs <op> [native_functions.yaml]
//! cargo run -p oxten-codegen -- where <op> [native_functions.yaml]
//! cargo run -p oxten-codegen -- backend <backend.yaml> [out dir]
//! cargo run -p oxten-codegen -- library <native_functions.yaml> <namespace> <module> [kernels type] [out dir]
//! cargo run -p oxten-codegen -- select <allowlist.yaml> [native_functions.yaml]
//! ```

use oxten_codegen::emit;
use std::path::PathBuf;
use std::process::ExitCode;

fn default_yaml() -> PathBuf {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../native_functions.yaml");
    p.canonicalize().unwrap_or(p)
}

fn load(path: Option<&String>) -> Result<Vec<oxten_codegen::yaml::NativeFunction>, String> {
    let path = path.map(PathBuf::from).unwrap_or_else(default_yaml);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    oxten_codegen::yaml::parse_native_functions(&text, &path.display().to_string())
        .map_err(|es| es.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n"))
}

/// The entries of the derivatives.yaml beside `native_functions` (none if there is no file).
fn load_derivatives(
    native_functions: &std::path::Path,
    fns: &[oxten_codegen::yaml::NativeFunction],
) -> Result<Vec<oxten_codegen::derivatives::Derivative>, String> {
    let dpath = emit::derivatives_path(native_functions);
    match std::fs::read_to_string(&dpath) {
        Ok(text) => oxten_codegen::derivatives::parse_derivatives(&text, &dpath.display().to_string(), fns)
            .map_err(|e| e.join("\n")),
        Err(_) => Ok(Vec::new()),
    }
}

/// Generates from native_functions.yaml and the derivatives.yaml beside it.
fn generate(path: Option<&String>) -> Result<emit::Generated, String> {
    let path = path.map(PathBuf::from).unwrap_or_else(default_yaml);
    let derivatives = emit::derivatives_path(&path);
    emit::generate_from_files(&path, derivatives.exists().then_some(derivatives.as_path())).map_err(|e| e.join("\n"))
}

fn run(args: &[String]) -> Result<String, String> {
    const USAGE: &str =
        "usage: oxten-codegen check [yaml] | write <dir> [yaml] | stubs <op> [yaml] | where <op> [yaml] | backend <backend.yaml> [out dir] \
         | library <native_functions.yaml> <namespace> <module> [kernels type] [out dir] \
         | select <allowlist.yaml> [yaml]";
    match args.first().map(String::as_str) {
        Some("check") => {
            let fns = load(args.get(1))?;
            generate(args.get(1))?;
            // The hand-written kernels beside the YAML must implement every `dispatch:` entry.
            let path = args.get(1).map(PathBuf::from).unwrap_or_else(default_yaml);
            let kernels = path.parent().unwrap_or(std::path::Path::new(".")).join("kernels/src");
            if kernels.is_dir() {
                let impls = oxten_codegen::kernel_impls::trait_impls(&kernels)?;
                let backends = oxten_codegen::backend::in_tree_backends(&fns);
                let missing = oxten_codegen::kernel_impls::missing_kernels(&fns, &backends, &impls);
                if !missing.is_empty() {
                    return Err(missing.join("\n"));
                }
            }
            // Formulas may only call helpers, operator functions and Tensor methods that exist.
            let root = path.parent().unwrap_or(std::path::Path::new("."));
            let dpath = emit::derivatives_path(&path);
            if let (true, Ok(text)) = (root.join("gen/src").is_dir(), std::fs::read_to_string(&dpath)) {
                use oxten_codegen::derivatives::{parse_derivatives, scan_rust, unknown_calls, Vocabulary};
                let file = dpath.display().to_string();
                let ds = parse_derivatives(&text, &file, &fns).map_err(|e| e.join("\n"))?;
                let (helpers, _) = scan_rust(&root.join("gen/src/autograd/helpers"))?;
                let (_, mut methods) = scan_rust(&root.join("runtime/src"))?;
                methods.extend(scan_rust(&root.join("gen/src"))?.1);
                let unknown = unknown_calls(&ds, &file, &Vocabulary::new(&fns, helpers, methods));
                if !unknown.is_empty() {
                    return Err(unknown.join("\n"));
                }
            }
            Ok(format!(
                "{} operators OK (native_functions.yaml, derivatives.yaml and the kernels they name)",
                fns.len()
            ))
        }
        Some("write") => {
            let dir = args.get(1).ok_or(USAGE)?;
            let gen = generate(args.get(2))?;
            gen.write_to(std::path::Path::new(dir)).map_err(|e| e.to_string())?;
            Ok(format!("wrote {} files to {dir}", gen.files.len()))
        }
        Some("backend") => {
            // Checks a backend YAML and writes its trait and registration (to the current
            // directory unless an output directory is given).
            let yaml = args.get(1).ok_or(USAGE)?;
            let out = args.get(2).map(PathBuf::from).unwrap_or_else(|| PathBuf::from("."));
            let path = oxten_codegen::backend::generate(std::path::Path::new(yaml), &out)?;
            Ok(format!("wrote {}", path.display()))
        }
        Some("library") => {
            // Writes an operator library's generated file (`<namespace>.rs`), to read or to
            // check its YAML; `-` for the kernels type when every op is `pointwise:`.
            let [yaml, namespace, module] = [1, 2, 3].map(|i| args.get(i).ok_or(USAGE));
            let kernels = args.get(4).filter(|k| k.as_str() != "-").cloned();
            let out = args.get(5).map(PathBuf::from).unwrap_or_else(|| PathBuf::from("."));
            let lib =
                oxten_codegen::library::Library { namespace: namespace?.clone(), module: module?.clone(), kernels };
            let path = oxten_codegen::library::generate(&lib, std::path::Path::new(yaml?), &out)?;
            Ok(format!("wrote {}", path.display()))
        }
        Some("select") => {
            // What a selective build with this allowlist keeps: the listed operators and
            // what they need, one per line, the added ones marked.
            let list = args.get(1).ok_or(USAGE)?;
            let path = args.get(2).map(PathBuf::from).unwrap_or_else(default_yaml);
            let fns = load(args.get(2))?;
            let ds = load_derivatives(&path, &fns)?;
            let selected = oxten_codegen::selective::read_allowlist(std::path::Path::new(list), &fns)?;
            let root = path.parent().map(PathBuf::from).unwrap_or_default();
            let keep = oxten_codegen::selective::closure(
                &selected,
                &fns,
                &ds,
                &oxten_codegen::selective::Sources::in_repo(&root),
            )?;
            let mut out = String::new();
            for op in &keep {
                out.push_str(op);
                out.push_str(if selected.contains(op) { "\n" } else { "  (needed)\n" });
            }
            out.push_str(&format!("{} listed, {} kept of {} operators", selected.len(), keep.len(), fns.len()));
            Ok(out)
        }
        Some("stubs") => {
            let op = args.get(1).ok_or(USAGE)?;
            let fns = load(args.get(2))?;
            emit::stubs(&fns, op)
        }
        Some("where") => {
            let op = args.get(1).ok_or(USAGE)?;
            let path = args.get(2).map(PathBuf::from).unwrap_or_else(default_yaml);
            let path = path.canonicalize().unwrap_or(path);
            let fns = load(args.get(2))?;
            let ds = load_derivatives(&path, &fns)?;
            let gen = generate(args.get(2))?;
            let kernels = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../kernels/src");
            oxten_codegen::locate::locate(op, &fns, &ds, &gen, &kernels)
        }
        _ => Err(USAGE.into()),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(msg) => {
            println!("{msg}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}
