//! Schema parsing: byte-exact round trips, `kind()`, `signature()`,
//! `is_factory()`, and parser error messages.

use expect_test::{expect, Expect};
use oxten_codegen::model::{
    Annotation, Argument, BaseTy, DefaultValue, FunctionSchema, OperatorName, Return, SchemaKind, Type,
};

/// Real schemas from PyTorch's `native_functions.yaml`, chosen to cover every
/// corner of the grammar.
const REAL_SCHEMAS: &[&str] = &[
    "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    "add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
    "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)",
    "add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor",
    "max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
    "max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) max, Tensor(b!) max_values) -> (Tensor(a!) values, Tensor(b!) indices)",
    "split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
    "unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]",
    "chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]",
    "index.Tensor(Tensor self, Tensor?[] indices) -> Tensor",
    "index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor(a!)",
    "empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
    "empty_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
    "arange.start_step(Scalar start, Scalar end, Scalar step=1, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
    "randint(SymInt high, SymInt[] size, *, ScalarType? dtype=long, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
    "avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor",
    "avg_pool2d.out(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None, *, Tensor(a!) out) -> Tensor(a!)",
    "max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)",
    "conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=1, SymInt[2] padding=0, SymInt[2] dilation=1, SymInt groups=1) -> Tensor",
    "convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups) -> Tensor",
    "_foreach_add_.Scalar(Tensor(a!)[] self, Scalar scalar) -> ()",
    "_foreach_add.List_out(Tensor[] self, Tensor[] other, *, Scalar alpha=1, Tensor(a!)[] out) -> ()",
    "_fused_sgd_(Tensor(a!)[] self, Tensor(b!)[] grads, Tensor(c!)[] momentum_buffer_list, *, float weight_decay, float momentum, float lr, float dampening, bool nesterov, bool maximize, bool is_first_step, Tensor? grad_scale=None, Tensor? found_inf=None) -> ()",
    "layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None, float eps=1e-05, bool cudnn_enable=True) -> Tensor",
    "native_layer_norm_backward(Tensor grad_out, Tensor input, SymInt[] normalized_shape, Tensor mean, Tensor rstd, Tensor? weight, Tensor? bias, bool[3] output_mask) -> (Tensor, Tensor, Tensor)",
    "native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)",
    "_native_batch_norm_legit(Tensor input, Tensor? weight, Tensor? bias, Tensor(a!) running_mean, Tensor(b!) running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)",
    "_native_batch_norm_legit.out(Tensor input, Tensor? weight, Tensor? bias, Tensor(a!) running_mean, Tensor(b!) running_var, bool training, float momentum, float eps, *, Tensor(d!) out, Tensor(e!) save_mean, Tensor(f!) save_invstd) -> (Tensor(d!), Tensor(e!), Tensor(f!))",
    "where.self(Tensor condition, Tensor self, Tensor other) -> Tensor",
    "to.dtype(Tensor(a) self, ScalarType dtype, bool non_blocking=False, bool copy=False, MemoryFormat? memory_format=None) -> Tensor(a)",
    "_to_copy(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, bool non_blocking=False, MemoryFormat? memory_format=None) -> Tensor",
    "contiguous(Tensor(a) self, *, MemoryFormat memory_format=contiguous_format) -> Tensor(a)",
    "transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)",
    "mse_loss(Tensor self, Tensor target, int reduction=Mean) -> Tensor",
    "nll_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=Mean, SymInt ignore_index=-100) -> Tensor",
    "cross_entropy_loss(Tensor self, Tensor target, Tensor? weight=None, int reduction=Mean, SymInt ignore_index=-100, float label_smoothing=0.0) -> Tensor",
    "smooth_l1_loss(Tensor self, Tensor target, int reduction=Mean, float beta=1.0) -> Tensor",
    "sum(Tensor self, *, ScalarType? dtype=None) -> Tensor",
    "sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    "sum.IntList_out(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None, Tensor(a!) out) -> Tensor(a!)",
    "sum.dim_DimnameList(Tensor self, Dimname[1] dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    "fft_fftn(Tensor self, SymInt[1]? s=None, int[1]? dim=None, str? norm=None) -> Tensor",
    "stft.center(Tensor self, int n_fft, int? hop_length=None, int? win_length=None, Tensor? window=None, bool center=True, str pad_mode=\"reflect\", bool normalized=False, bool? onesided=None, bool? return_complex=None) -> Tensor",
    "quantile(Tensor self, Tensor q, int? dim=None, bool keepdim=False, *, str interpolation='linear') -> Tensor",
    "linalg_matrix_norm.str_ord(Tensor self, str ord='fro', int[] dim=[-2,-1], bool keepdim=False, *, ScalarType? dtype=None) -> Tensor",
    "binary_cross_entropy(Tensor self, Tensor target, Tensor? weight=None, int reduction=Mean) -> Tensor",
    "rrelu(Tensor self, Scalar lower=0.125, Scalar upper=0.3333333333333333, bool training=False, Generator? generator=None) -> Tensor",
    "hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor",
    "clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor",
    "nan_to_num(Tensor self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor",
    "aminmax(Tensor self, *, int? dim=None, bool keepdim=False) -> (Tensor min, Tensor max)",
    "histogramdd(Tensor self, int[] bins, float[]? range=None, Tensor? weight=None, bool density=False) -> (Tensor hist, Tensor[] bin_edges)",
    "segment_reduce(Tensor data, str reduce, *, Tensor? lengths=None, Tensor? indices=None, Tensor? offsets=None, int axis=0, bool unsafe=False, Scalar? initial=None) -> Tensor",
    "unflatten.Dimname(Tensor(a) self, Dimname dim, SymInt[] sizes, Dimname[] names) -> Tensor(a)",
    "embedding_bag.padding_idx(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq, int mode, bool sparse, Tensor? per_sample_weights, bool include_last_offset, int? padding_idx) -> (Tensor, Tensor, Tensor, Tensor)",
    "_backward(Tensor self, Tensor[] inputs, Tensor? gradient=None, bool? retain_graph=None, bool create_graph=False) -> ()",
    "cat(Tensor[] tensors, int dim=0) -> Tensor",
    "cat.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out) -> Tensor(a!)",
    "resize_(Tensor(a!) self, SymInt[] size, *, MemoryFormat? memory_format=None) -> Tensor(a!)",
    "set_.source_Storage(Tensor(a!) self, Storage source) -> Tensor(a!)",
    "record_stream(Tensor(a!) self, Stream s) -> ()",
    "_amp_update_scale_(Tensor(a!) self, Tensor(b!) growth_tracker, Tensor found_inf, float scale_growth_factor, float scale_backoff_factor, int growth_interval) -> Tensor(a!)",
    "_amp_foreach_non_finite_check_and_unscale_(Tensor(a!)[] self, Tensor(b!) found_inf, Tensor inv_scale) -> ()",
    "__and__.Tensor(Tensor self, Tensor other) -> Tensor",
    "__iand__.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
    "is_nonzero(Tensor self) -> bool",
    "size.int(Tensor self, int dim) -> int",
    "_local_scalar_dense(Tensor self) -> Scalar",
    "result_type.Tensor(Tensor tensor, Tensor other) -> ScalarType",
    "sparse_csr_tensor.crow_col_value(Tensor crow_indices, Tensor col_indices, Tensor values, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=False) -> Tensor",
    "to_dense(Tensor self, ScalarType? dtype=None, *, bool? masked_grad=None) -> Tensor",
    "_validate_sparse_coo_tensor_args(Tensor indices, Tensor values, int[] size, bool? is_coalesced=None, bool? check_pinning=None) -> ()",
];

/// Grammar corners that no real schema above exercises.
const SYNTHETIC_SCHEMAS: &[&str] = &[
    "widen(Tensor(a! -> a|b) self, Tensor(b) other) -> ()",
    "alias_union(Tensor(a|b) self) -> Tensor(a|b)",
    "opt_mutable(Tensor self, Tensor(a!)? buffer) -> Tensor",
    "opt_view(Tensor(a)? self) -> Tensor(a)?",
    "opt_list(Tensor[]? xs, SymInt[]? sizes=None, int[3]? triple=None) -> Tensor[]",
    "list_out.out(Tensor self, *, Tensor(a!)[] out) -> Tensor(a!)[]",
    "literals(Tensor self, float a=-1.0, float b=0.5, float c=1e-05, float d=-inf, int e=-100, int[2] f=[0, 0], str g=\"x\", str h='mean', bool i=True, int? j=None, int k=Mean) -> Tensor",
    "nothing() -> ()",
    "only_kwargs(*, Tensor x) -> Tensor",
    "named_single(Tensor self) -> Tensor result",
];

fn assert_round_trip(s: &str) {
    let schema = FunctionSchema::parse(s).unwrap_or_else(|e| panic!("failed to parse `{s}`: {e}"));
    assert_eq!(schema.to_string(), s, "round trip");
    for arg in schema.arguments.flat_all() {
        let text = arg.to_string();
        assert_eq!(Argument::parse(&text).as_ref(), Ok(arg), "argument `{text}`");
        assert_eq!(Type::parse(&arg.ty.to_string()).as_ref(), Ok(&arg.ty));
        if let Some(ann) = &arg.annotation {
            assert_eq!(Annotation::parse(&ann.to_string()).as_ref(), Ok(ann));
        }
    }
    for ret in &schema.returns {
        assert_eq!(Return::parse(&ret.to_string()).as_ref(), Ok(ret));
    }
    assert_eq!(OperatorName::parse(&schema.name.to_string()), Ok(schema.name.clone()));
}

#[test]
fn real_schemas_round_trip() {
    assert!(REAL_SCHEMAS.len() >= 40);
    for s in REAL_SCHEMAS {
        assert_round_trip(s);
    }
}

#[test]
fn synthetic_schemas_round_trip() {
    for s in SYNTHETIC_SCHEMAS {
        assert_round_trip(s);
    }
}

fn parse(s: &str) -> FunctionSchema {
    FunctionSchema::parse(s).unwrap()
}

#[test]
fn structure_of_add_out() {
    let s = parse("add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)");
    assert_eq!(s.name.name.base, "add");
    assert_eq!(s.name.overload, "out");
    let names = |args: &[Argument]| args.iter().map(|a| a.name.clone()).collect::<Vec<_>>();
    assert_eq!(names(&s.arguments.positional), ["self", "other"]);
    assert_eq!(names(&s.arguments.kwarg_only), ["alpha"]);
    assert_eq!(names(&s.arguments.out), ["out"]);
    assert_eq!(s.arguments.flat_non_out().len(), 3);
    assert_eq!(s.arguments.flat_all().len(), 4);
    assert_eq!(s.arguments.self_arg().map(|a| a.name.as_str()), Some("self"));
    assert_eq!(s.arguments.kwarg_only[0].default.as_deref(), Some("1"));
    assert!(s.arguments.out[0].is_write());
    assert_eq!(
        s.returns[0].annotation,
        Some(Annotation { alias_set: vec!["a".into()], is_write: true, alias_set_after: vec![] })
    );
}

#[test]
fn type_helpers() {
    let t = |s: &str| Type::parse(s).unwrap();
    for s in ["Tensor", "Tensor?", "Tensor[]", "Tensor?[]", "Tensor[]?"] {
        assert!(t(s).is_tensor_like(), "{s}");
        assert_eq!(t(s).base(), BaseTy::Tensor);
    }
    assert!(!t("int[2]").is_tensor_like());
    assert!(t("int[1]?").is_optional());
    assert!(!t("Tensor?[]").is_optional());
    assert_eq!(t("SymInt[]?").base(), BaseTy::SymInt);
    assert_eq!(
        t("int[1]?"),
        Type::Optional(Box::new(Type::List { elem: Box::new(Type::Base(BaseTy::Int)), size: Some(1) }))
    );
    for b in BaseTy::ALL {
        assert_eq!(t(b.name()), Type::Base(b));
    }
}

#[test]
fn operator_names() {
    let n = |s: &str| OperatorName::parse(s).unwrap();
    assert!(n("add_.Tensor").name.inplace);
    assert_eq!(n("add_.Tensor").name.base, "add");
    assert_eq!(n("sum").overload, "");
    let iand = n("__iand__.Tensor");
    assert!(iand.name.dunder && iand.name.inplace);
    assert_eq!(iand.name.base, "and");
    let and = n("__and__");
    assert!(and.name.dunder && !and.name.inplace);
    for s in ["add.Tensor", "add_.Tensor", "sum", "__iand__.Tensor", "__and__", "_foreach_add_.Scalar"] {
        assert_eq!(n(s).to_string(), s);
    }
    assert!(OperatorName::parse("add.").is_err());
    assert!(OperatorName::parse("add(Tensor self)").is_err());
}

#[test]
fn default_values() {
    let arg = |s: &str| Argument::parse(s).unwrap();
    assert_eq!(
        arg("int[2] padding=0").default_value(),
        Some(DefaultValue::List(vec![DefaultValue::Int(0), DefaultValue::Int(0)]))
    );
    assert_eq!(arg("int[2] stride=[]").default_value(), Some(DefaultValue::List(vec![])));
    assert_eq!(arg("int[1]? dim=None").default_value(), Some(DefaultValue::None));
    assert_eq!(
        arg("SymInt[2]? s=1").default_value().unwrap().to_owned(),
        DefaultValue::List(vec![DefaultValue::Int(1); 2])
    );
    assert_eq!(arg("float eps=1e-05").default_value().unwrap().as_f64(), Some(1e-5));
    assert_eq!(arg("str r='mean'").default_value(), Some(DefaultValue::Str("mean".into())));
    assert_eq!(arg("int r=Mean").default_value(), Some(DefaultValue::Ident("Mean".into())));
    assert_eq!(arg("bool b=False").default_value(), Some(DefaultValue::Bool(false)));
    assert_eq!(arg("Tensor x").default_value(), None);
    // The stored text is never normalised.
    assert_eq!(arg("int[] dim=[-2,-1]").default.as_deref(), Some("[-2,-1]"));
}

#[test]
fn kinds() {
    let kind = |s: &str| parse(s).kind();
    assert_eq!(kind(REAL_SCHEMAS[0]), SchemaKind::Functional);
    assert_eq!(kind(REAL_SCHEMAS[1]), SchemaKind::Inplace);
    assert_eq!(kind(REAL_SCHEMAS[2]), SchemaKind::Out);
    assert_eq!(kind("_foreach_add_.Scalar(Tensor(a!)[] self, Scalar scalar) -> ()"), SchemaKind::Inplace);
    assert_eq!(kind("__iand__.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)"), SchemaKind::Inplace);
    assert_eq!(kind("__and__.Tensor(Tensor self, Tensor other) -> Tensor"), SchemaKind::Functional);
    assert_eq!(kind("record_stream(Tensor(a!) self, Stream s) -> ()"), SchemaKind::Mutable);
    assert_eq!(
        kind("_native_batch_norm_legit(Tensor input, Tensor? weight, Tensor? bias, Tensor(a!) running_mean, Tensor(b!) running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)"),
        SchemaKind::Mutable
    );
    // Out wins over mutable positional arguments.
    assert_eq!(kind(REAL_SCHEMAS[27]), SchemaKind::Out);
    // A view is functional: `(a)` without `!` does not write.
    assert_eq!(kind("transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)"), SchemaKind::Functional);
}

fn check_signature(schema: &str, expected: Expect) {
    expected.assert_eq(&parse(schema).signature().to_string());
}

#[test]
fn signatures() {
    let add = "add(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor";
    for s in &REAL_SCHEMAS[..3] {
        assert_eq!(parse(s).signature().to_string(), add);
    }
    check_signature(
        "max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) max, Tensor(b!) max_values) -> (Tensor(a!) values, Tensor(b!) indices)",
        expect!["max(Tensor self, int dim, bool keepdim=False) -> (Tensor, Tensor)"],
    );
    check_signature(
        "split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]",
        expect!["split(Tensor self, SymInt split_size, int dim=0) -> Tensor[]"],
    );
    check_signature(
        "__iand__.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)",
        expect!["__and__(Tensor self, Tensor other) -> Tensor"],
    );
    // Unreturned mutable arguments become returns, so that foreach inplace /
    // list-out variants line up with their functional variant.
    check_signature(
        "_foreach_add_.Scalar(Tensor(a!)[] self, Scalar scalar) -> ()",
        expect!["_foreach_add(Tensor[] self, Scalar scalar) -> Tensor[]"],
    );
    check_signature(
        "_foreach_add.List_out(Tensor[] self, Tensor[] other, *, Scalar alpha=1, Tensor(a!)[] out) -> ()",
        expect!["_foreach_add(Tensor[] self, Tensor[] other, *, Scalar alpha=1) -> Tensor[]"],
    );
    check_signature(
        "_native_batch_norm_legit.out(Tensor input, Tensor? weight, Tensor? bias, Tensor(a!) running_mean, Tensor(b!) running_var, bool training, float momentum, float eps, *, Tensor(d!) out, Tensor(e!) save_mean, Tensor(f!) save_invstd) -> (Tensor(d!), Tensor(e!), Tensor(f!))",
        expect!["_native_batch_norm_legit(Tensor input, Tensor? weight, Tensor? bias, Tensor running_mean, Tensor running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor, Tensor, Tensor)"],
    );
    assert_eq!(
        parse(REAL_SCHEMAS[26]).signature(),
        parse(REAL_SCHEMAS[27]).signature(),
        "mutable and out variants of _native_batch_norm_legit group together"
    );
    assert_ne!(
        parse("sum(Tensor self, *, ScalarType? dtype=None) -> Tensor").signature(),
        parse(REAL_SCHEMAS[38]).signature()
    );
}

#[test]
fn factories() {
    assert!(parse(REAL_SCHEMAS[11]).is_factory(), "empty.memory_format");
    assert!(parse(REAL_SCHEMAS[13]).is_factory(), "arange.start_step");
    assert!(!parse(REAL_SCHEMAS[12]).is_factory(), "empty_like");
    assert!(!parse("empty.out(SymInt[] size, *, MemoryFormat? memory_format=None, Tensor(a!) out) -> Tensor(a!)")
        .is_factory());
    assert!(!parse("cat(Tensor[] tensors, int dim=0) -> Tensor").is_factory());
    assert!(parse("nothing() -> ()").is_factory());
}

fn check_error(schema: &str, expected: Expect) {
    match FunctionSchema::parse(schema) {
        Ok(s) => panic!("`{schema}` parsed as {s:?}"),
        Err(e) => expected.assert_eq(&e),
    }
}

#[test]
fn error_unknown_type() {
    check_error(
        "add(Tensr self) -> Tensor",
        expect!["column 5: unknown type `Tensr` (known types: Tensor, int, SymInt, float, bool, str, Scalar, ScalarType, Layout, Device, MemoryFormat, Generator, Dimname, Stream, Storage)"],
    );
}

#[test]
fn error_whitespace_is_significant() {
    check_error(
        "add(Tensor self,Tensor other) -> Tensor",
        expect!["column 16: expected `, ` or `)` after an argument, found `,`"],
    );
    check_error("add(Tensor  self) -> Tensor", expect!["column 12: expected an argument name, found ` `"]);
    check_error("add(Tensor self)->Tensor", expect!["column 17: expected ` -> ` after the argument list, found `-`"]);
}

#[test]
fn error_annotation_on_non_tensor() {
    check_error(
        "f(Tensor self, int(a) n) -> Tensor",
        expect!["column 19: alias annotation `(a)` is only allowed on Tensor types, not on `int`"],
    );
    check_error(
        "f(Tensor self) -> int(a!)",
        expect!["column 22: alias annotation `(a!)` is only allowed on Tensor types, not on `int`"],
    );
}

#[test]
fn error_bad_annotation() {
    check_error(
        "f(Tensor(A) self) -> Tensor",
        expect!["column 10: expected an alias set name (lowercase letters, e.g. `a`), found `A`"],
    );
    check_error("f(Tensor(a!) self -> Tensor", expect!["column 18: expected `, ` or `)` after an argument, found ` `"]);
}

#[test]
fn error_duplicate_argument() {
    check_error(
        "f(Tensor self, int dim, *, bool dim=False) -> Tensor",
        expect!["column 28: duplicate argument name `dim`"],
    );
}

#[test]
fn error_out_argument_not_last() {
    check_error(
        "add.out(Tensor self, Tensor other, *, Tensor(a!) out, Scalar alpha=1) -> Tensor(a!)",
        expect!["column 55: keyword-only argument `alpha` comes after out argument `out`; out arguments (mutable keyword-only Tensors) must come last"],
    );
}

#[test]
fn error_out_not_returned() {
    check_error(
        "add.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor",
        expect![
            "column 58: an out= schema must return its out arguments in order: expected `Tensor(a!)`, found `Tensor`"
        ],
    );
    check_error(
        "max.dim_max(Tensor self, int dim, *, Tensor(a!) max, Tensor(b!) max_values) -> (Tensor(b!) values, Tensor(a!) indices)",
        expect!["column 80: an out= schema must return its out arguments in order: expected `(Tensor(a!), Tensor(b!))`, found `(Tensor(b!) values, Tensor(a!) indices)`"],
    );
    check_error(
        "add.out(Tensor self, *, Tensor(a!) out) -> ()",
        expect!["column 44: an out= schema must return its out arguments in order: expected `Tensor(a!)`, found `()`"],
    );
}

#[test]
fn error_mixed_returns() {
    check_error(
        "f(Tensor(a!) self, Tensor other) -> (Tensor(a!), Tensor)",
        expect!["column 37: returns `(Tensor(a!), Tensor)` mix mutable and immutable values; they must be all mutable or all immutable"],
    );
}

#[test]
fn error_mutable_return_without_argument() {
    check_error(
        "f(Tensor(a!) self) -> (Tensor(a!), Tensor(b!))",
        expect!["column 36: mutable return `Tensor(b!)` does not share its annotation with any mutable argument"],
    );
}

#[test]
fn error_inplace_rules() {
    check_error(
        "add_.Tensor(Tensor self, Tensor other) -> Tensor",
        expect!["column 13: inplace operator `add_` must take `Tensor(a!) self` as its first argument"],
    );
    check_error(
        "add_.Tensor(Tensor(a!) self, Tensor other) -> Tensor",
        expect!["column 47: inplace operator `add_` with `Tensor(a!) self` must return `Tensor(a!)`, found `Tensor`"],
    );
    check_error(
        "_foreach_add_.Scalar(Tensor(a!)[] self, Scalar scalar) -> Tensor(a!)[]",
        expect!["column 59: inplace operator `_foreach_add_` with `Tensor(a!)[] self` must return `()`, found `Tensor(a!)[]`"],
    );
    check_error(
        "zero_() -> ()",
        expect!["column 7: inplace operator `zero_` must take `Tensor(a!) self` as its first argument"],
    );
}

#[test]
fn error_misc_syntax() {
    check_error(
        "f(Tensor self) -> (Tensor)",
        expect!["column 19: a single return must not be parenthesized: write `Tensor` instead of `(Tensor)`"],
    );
    check_error("f(Tensor self, *) -> Tensor", expect!["column 16: `*` must be followed by keyword-only arguments"]);
    check_error("f(Tensor self, int x=) -> Tensor", expect!["column 22: expected a default value, found `)`"]);
    check_error("f(Tensor self, str x='mean) -> Tensor", expect!["column 22: unterminated string literal"]);
    check_error("f(Tensor self) -> Tensor;", expect!["column 25: unexpected `;` after the returns"]);
    check_error("f(Tensor self, int?? x) -> Tensor", expect!["column 20: type `int?` is already optional"]);
    check_error("f(Tensor self, int[02] x) -> Tensor", expect!["column 20: invalid list size `02`"]);
    check_error("aten::f(Tensor self) -> Tensor", expect!["column 5: expected `(` after the operator name, found `:`"]);
}
