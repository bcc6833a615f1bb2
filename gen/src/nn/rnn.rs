//! `nn.RNN`, `nn.LSTM`, `nn.GRU` (multi-layer, bidirectional, `batch_first`, dropout between
//! layers) and the single-step `nn.RNNCell`, `nn.LSTMCell`, `nn.GRUCell`.
//!
//! The cells call the `rnn_tanh_cell`/`rnn_relu_cell`/`lstm_cell`/`gru_cell` operators. The
//! sequence modules use the same gate functions (`oxten_kernels::recurrent`) but, as PyTorch does
//! on the CPU, project every time step's input of a layer in one matrix product first, leaving
//! one `hidden @ w_hh.T` product per step. Parameter names, shapes, order and initialisation
//! (uniform in `±1/√hidden_size`) are PyTorch's, so `state_dict`s load in both directions.
//! LSTM's `proj_size` is not supported.

use super::{init, Module, Slot};
use crate::kernels::recurrent::{gru_gates, lstm_gates, simple_gates};
use crate::{ops, Error, Result, Tensor};

/// The step function of a recurrent layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Tanh,
    Relu,
    Lstm,
    Gru,
}

impl Mode {
    /// Rows of `w_ih`/`w_hh` per hidden unit.
    fn gates(self) -> i64 {
        match self {
            Mode::Lstm => 4,
            Mode::Gru => 3,
            Mode::Tanh | Mode::Relu => 1,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Mode::Lstm => "LSTM",
            Mode::Gru => "GRU",
            Mode::Tanh | Mode::Relu => "RNN",
        }
    }

    /// Hidden states carried between steps: `h`, and `c` for an LSTM.
    fn states(self) -> usize {
        if self == Mode::Lstm {
            2
        } else {
            1
        }
    }
}

/// The non-linearity of [`RNN`] and [`RNNCell`] (PyTorch's `nonlinearity="tanh"` / `"relu"`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Nonlinearity {
    /// `tanh` (the default).
    #[default]
    Tanh,
    /// `relu`.
    Relu,
}

/// The options of [`RNN`], [`LSTM`] and [`GRU`]: PyTorch's constructor arguments and defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct RnnOptions {
    /// Stacked layers, each reading the previous one's output (default 1).
    pub num_layers: i64,
    /// Whether the layers have `bias_ih`/`bias_hh` (default true).
    pub bias: bool,
    /// Inputs and outputs are `[batch, seq, feature]` instead of `[seq, batch, feature]`.
    pub batch_first: bool,
    /// Dropout on the outputs of every layer but the last, in training mode (default 0).
    pub dropout: f64,
    /// A second, reversed direction per layer, its outputs concatenated (default false).
    pub bidirectional: bool,
}

impl Default for RnnOptions {
    fn default() -> Self {
        RnnOptions { num_layers: 1, bias: true, batch_first: false, dropout: 0.0, bidirectional: false }
    }
}

/// One layer-direction's (or one cell's) parameters.
struct Weights {
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Option<Tensor>,
    b_hh: Option<Tensor>,
}

impl Weights {
    /// PyTorch's initialisation: every parameter uniform in `±1/√hidden_size`.
    fn new(mode: Mode, input_size: i64, hidden_size: i64, bias: bool) -> Weights {
        let k = 1.0 / (hidden_size as f64).sqrt();
        let param = |sizes: &[i64]| {
            let t = crate::empty(sizes);
            init::uniform_(&t, -k, k);
            t.requires_grad_(true)
        };
        let rows = mode.gates() * hidden_size;
        Weights {
            w_ih: param(&[rows, input_size]),
            w_hh: param(&[rows, hidden_size]),
            b_ih: bias.then(|| param(&[rows])),
            b_hh: bias.then(|| param(&[rows])),
        }
    }

    fn visit(&self, suffix: &str, f: &mut dyn FnMut(&str, &Tensor, Slot)) {
        f(&format!("weight_ih{suffix}"), &self.w_ih, Slot::Parameter);
        f(&format!("weight_hh{suffix}"), &self.w_hh, Slot::Parameter);
        if let (Some(b_ih), Some(b_hh)) = (&self.b_ih, &self.b_hh) {
            f(&format!("bias_ih{suffix}"), b_ih, Slot::Parameter);
            f(&format!("bias_hh{suffix}"), b_hh, Slot::Parameter);
        }
    }

    /// One step from the input's projection `x_proj`: the new states.
    fn step(&self, mode: Mode, x_proj: &Tensor, states: &[Tensor]) -> Result<Vec<Tensor>> {
        let h_proj = ops::linear::call(&states[0], &self.w_hh, self.b_hh.as_ref())?;
        Ok(match mode {
            Mode::Tanh | Mode::Relu => vec![simple_gates(x_proj, &h_proj, mode == Mode::Relu)?],
            Mode::Gru => vec![gru_gates(x_proj, &h_proj, &states[0])?],
            Mode::Lstm => {
                let (h, c) = lstm_gates(x_proj, &h_proj, &states[1])?;
                vec![h, c]
            }
        })
    }
}

/// `unbind(0)` as one autograd node whose backward stacks the steps' gradients (PyTorch's
/// `unbind` backward). Selecting the steps one by one would give each its own node, whose
/// gradient is a zero-filled tensor of the whole sequence's size with one step written, and the
/// engine would add `seq` of those: quadratic in the sequence length.
struct UnbindSteps;

impl crate::autograd::Function for UnbindSteps {
    fn name(&self) -> String {
        "UnbindSteps".into()
    }

    fn forward(&self, _ctx: &mut crate::autograd::FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        ops::unbind::call(&inputs[0], 0)
    }

    fn backward(&self, _ctx: &crate::autograd::FunctionCtx, grads: &[Option<Tensor>]) -> Result<Vec<Option<Tensor>>> {
        // The context materializes missing gradients as zeros.
        let grads: Vec<Tensor> = grads
            .iter()
            .map(|g| g.clone().ok_or_else(|| Error::runtime("UnbindSteps: a step's gradient is missing")))
            .collect::<Result<_>>()?;
        Ok(vec![Some(ops::stack::call(&grads, 0)?)])
    }
}

/// The steps of a sequence (`[seq, …]`, along dim 0). Through [`UnbindSteps`] when autograd
/// records them; plain views otherwise, and under forward-mode AD (a custom function has no
/// forward formula).
fn steps_of(x: &Tensor) -> Result<Vec<Tensor>> {
    let records = crate::autograd::is_grad_enabled() && x.requires_grad();
    let dual =
        crate::autograd::forward_ad::is_active() && !crate::autograd::forward_ad::levels_of(&[Some(x)]).is_empty();
    if records && !dual {
        crate::autograd::apply_function(UnbindSteps, std::slice::from_ref(x))
    } else {
        ops::unbind::call(x, 0)
    }
}

/// The layers of a sequence module.
struct Stack {
    mode: Mode,
    input_size: i64,
    hidden_size: i64,
    opts: RnnOptions,
    /// Layer-major, then direction.
    weights: Vec<Weights>,
    training: bool,
}

impl Stack {
    fn new(mode: Mode, input_size: i64, hidden_size: i64, opts: RnnOptions) -> Result<Stack> {
        let name = mode.name();
        if hidden_size <= 0 {
            return Err(Error::value(format!("{name}: hidden_size must be greater than zero, got {hidden_size}")));
        }
        if input_size < 0 {
            return Err(Error::value(format!("{name}: input_size must be non-negative, got {input_size}")));
        }
        if opts.num_layers <= 0 {
            return Err(Error::value(format!("{name}: num_layers must be greater than zero, got {}", opts.num_layers)));
        }
        if !(0.0..=1.0).contains(&opts.dropout) {
            return Err(Error::value(format!(
                "{name}: dropout should be a number in range [0, 1] representing the probability of an element being zeroed, got {}",
                opts.dropout
            )));
        }
        let dirs = if opts.bidirectional { 2 } else { 1 };
        let mut weights = Vec::new();
        for layer in 0..opts.num_layers {
            let layer_input = if layer == 0 { input_size } else { hidden_size * dirs };
            for _ in 0..dirs {
                weights.push(Weights::new(mode, layer_input, hidden_size, opts.bias));
            }
        }
        Ok(Stack { mode, input_size, hidden_size, opts, weights, training: true })
    }

    fn directions(&self) -> i64 {
        if self.opts.bidirectional {
            2
        } else {
            1
        }
    }

    fn visit(&self, f: &mut dyn FnMut(&str, &Tensor, Slot)) {
        let dirs = self.directions() as usize;
        for (i, w) in self.weights.iter().enumerate() {
            let reverse = if i % dirs == 1 { "_reverse" } else { "" };
            w.visit(&format!("_l{}{reverse}", i / dirs), f);
        }
    }

    /// Runs the layers over `input` from `states` (each `[layers·directions, batch, hidden]`, or
    /// without the batch dim for an unbatched input; zeros when `None`): the output sequence
    /// and the final states, shaped as the inputs.
    fn run(&self, input: &Tensor, states: Option<Vec<Tensor>>) -> Result<(Tensor, Vec<Tensor>)> {
        let name = self.mode.name();
        let batched = match input.dim() {
            3 => true,
            2 => false,
            d => return Err(Error::shape(format!("{name}: Expected input to be 2D or 3D, got {d}D instead"))),
        };
        // [seq, batch, feature] inside.
        let x = if !batched {
            input.try_unsqueeze(1)?
        } else if self.opts.batch_first {
            input.try_transpose(0, 1)?
        } else {
            input.clone()
        };
        let (steps, batch, features) = (x.sizes()[0], x.sizes()[1], x.sizes()[2]);
        if features != self.input_size {
            return Err(Error::shape(format!(
                "{name}: input.size(-1) must be equal to input_size. Expected {}, got {features}",
                self.input_size
            )));
        }
        if steps == 0 {
            return Err(Error::shape(format!("{name}: Expected sequence length to be larger than 0 in RNN")));
        }
        let stacked = self.opts.num_layers * self.directions();
        let states = match states {
            Some(given) => {
                let want: Vec<i64> =
                    if batched { vec![stacked, batch, self.hidden_size] } else { vec![stacked, self.hidden_size] };
                for s in &given {
                    if s.sizes() != want[..] {
                        return Err(Error::shape(format!(
                            "{name}: Expected hidden size {want:?}, got {:?}",
                            &s.sizes()[..]
                        )));
                    }
                }
                if batched {
                    given
                } else {
                    given.iter().map(|s| s.try_unsqueeze(1)).collect::<Result<_>>()?
                }
            }
            None => {
                let zeros = ops::zeros::call(
                    &[stacked, batch, self.hidden_size],
                    Some(input.dtype()),
                    None,
                    Some(input.device()),
                    None,
                )?;
                vec![zeros; self.mode.states()]
            }
        };
        let dirs = self.directions();
        let mut finals: Vec<Vec<Tensor>> = vec![Vec::new(); self.mode.states()];
        let mut layer_input = x;
        for layer in 0..self.opts.num_layers {
            let mut outputs = Vec::new();
            for dir in 0..dirs {
                let index = layer * dirs + dir;
                let w = &self.weights[index as usize];
                // Every step's input projection at once: [seq, batch, gates·hidden].
                let x_proj = ops::linear::call(&layer_input, &w.w_ih, w.b_ih.as_ref())?;
                let mut state: Vec<Tensor> = states.iter().map(|s| s.try_select(0, index)).collect::<Result<_>>()?;
                let x_steps = steps_of(&x_proj)?;
                let mut seq = vec![None; steps as usize];
                for i in 0..steps {
                    let t = if dir == 1 { steps - 1 - i } else { i };
                    state = w.step(self.mode, &x_steps[t as usize], &state)?;
                    seq[t as usize] = Some(state[0].clone());
                }
                let seq: Vec<Tensor> = seq.into_iter().flatten().collect();
                outputs.push(ops::stack::call(&seq, 0)?);
                for (f, s) in finals.iter_mut().zip(state) {
                    f.push(s);
                }
            }
            let out = if dirs == 2 { ops::cat::call(&outputs, 2)? } else { outputs.swap_remove(0) };
            let last = layer + 1 == self.opts.num_layers;
            layer_input = if !last && self.training && self.opts.dropout > 0.0 {
                ops::dropout::call(&out, self.opts.dropout, true)?
            } else {
                out
            };
        }
        let output = if !batched {
            layer_input.try_squeeze_dim(1)?
        } else if self.opts.batch_first {
            layer_input.try_transpose(0, 1)?
        } else {
            layer_input
        };
        let finals = finals
            .iter()
            .map(|f| {
                let s = ops::stack::call(f, 0)?;
                if batched {
                    Ok(s)
                } else {
                    s.try_squeeze_dim(1)
                }
            })
            .collect::<Result<_>>()?;
        Ok((output, finals))
    }
}

macro_rules! sequence_module {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        pub struct $name {
            stack: Stack,
        }

        impl $name {
            /// The number of input features.
            pub fn input_size(&self) -> i64 {
                self.stack.input_size
            }

            /// The number of hidden units per direction.
            pub fn hidden_size(&self) -> i64 {
                self.stack.hidden_size
            }

            /// The options it was built with.
            pub fn options(&self) -> &RnnOptions {
                &self.stack.opts
            }
        }

        impl Module for $name {
            /// The output sequence (the final states are dropped: see `forward_with`).
            fn forward(&self, input: &Tensor) -> Result<Tensor> {
                Ok(self.stack.run(input, None)?.0)
            }

            fn visit(&self, f: &mut dyn FnMut(&str, &Tensor, Slot)) {
                self.stack.visit(f)
            }

            fn set_training(&mut self, training: bool) {
                self.stack.training = training;
            }
        }
    };
}

sequence_module!(
    /// `nn.RNN`: `h_t = tanh(x_t W_ihᵀ + b_ih + h_{t-1} W_hhᵀ + b_hh)` (or `relu`), per layer and
    /// direction.
    ///
    /// ```
    /// use oxten::nn::{Module, RnnOptions, RNN};
    /// let rnn = RNN::with_options(3, 5, Default::default(), RnnOptions { num_layers: 2, ..Default::default() }).unwrap();
    /// let (out, h) = rnn.forward_with(&oxten::ones(&[7, 2, 3]), None).unwrap();
    /// assert_eq!((&out.sizes()[..], &h.sizes()[..]), (&[7, 2, 5][..], &[2, 2, 5][..]));
    /// ```
    RNN
);

sequence_module!(
    /// `nn.LSTM`: input, forget, cell and output gates per step (gate order i, f, g, o in the
    /// weights, as PyTorch).
    LSTM
);

sequence_module!(
    /// `nn.GRU`: reset and update gates and a candidate state per step (gate order r, z, n).
    GRU
);

impl RNN {
    /// A one-layer `tanh` RNN.
    pub fn new(input_size: i64, hidden_size: i64) -> Self {
        Self::with_options(input_size, hidden_size, Nonlinearity::Tanh, RnnOptions::default())
            .expect("RNN::new: invalid sizes (RNN::with_options returns the error)")
    }

    /// An RNN with the given non-linearity and options.
    pub fn with_options(
        input_size: i64,
        hidden_size: i64,
        nonlinearity: Nonlinearity,
        opts: RnnOptions,
    ) -> Result<Self> {
        let mode = if nonlinearity == Nonlinearity::Relu { Mode::Relu } else { Mode::Tanh };
        Ok(RNN { stack: Stack::new(mode, input_size, hidden_size, opts)? })
    }

    /// `(output, h_n)` from `input` (`[seq, batch, input_size]`, `[batch, seq, …]` with
    /// `batch_first`, or `[seq, input_size]`) and `h_0` (`[layers·directions, batch, hidden]`;
    /// zeros when `None`).
    pub fn forward_with(&self, input: &Tensor, h0: Option<&Tensor>) -> Result<(Tensor, Tensor)> {
        let (out, mut states) = self.stack.run(input, h0.map(|h| vec![h.clone()]))?;
        Ok((out, states.swap_remove(0)))
    }
}

impl GRU {
    /// A one-layer GRU.
    pub fn new(input_size: i64, hidden_size: i64) -> Self {
        Self::with_options(input_size, hidden_size, RnnOptions::default())
            .expect("GRU::new: invalid sizes (GRU::with_options returns the error)")
    }

    /// A GRU with the given options.
    pub fn with_options(input_size: i64, hidden_size: i64, opts: RnnOptions) -> Result<Self> {
        Ok(GRU { stack: Stack::new(Mode::Gru, input_size, hidden_size, opts)? })
    }

    /// `(output, h_n)`, as [`RNN::forward_with`].
    pub fn forward_with(&self, input: &Tensor, h0: Option<&Tensor>) -> Result<(Tensor, Tensor)> {
        let (out, mut states) = self.stack.run(input, h0.map(|h| vec![h.clone()]))?;
        Ok((out, states.swap_remove(0)))
    }
}

impl LSTM {
    /// A one-layer LSTM.
    pub fn new(input_size: i64, hidden_size: i64) -> Self {
        Self::with_options(input_size, hidden_size, RnnOptions::default())
            .expect("LSTM::new: invalid sizes (LSTM::with_options returns the error)")
    }

    /// An LSTM with the given options.
    pub fn with_options(input_size: i64, hidden_size: i64, opts: RnnOptions) -> Result<Self> {
        Ok(LSTM { stack: Stack::new(Mode::Lstm, input_size, hidden_size, opts)? })
    }

    /// `(output, (h_n, c_n))` from `input` and `(h_0, c_0)` (zeros when `None`), shaped as
    /// [`RNN::forward_with`]'s.
    pub fn forward_with(&self, input: &Tensor, hc0: Option<(&Tensor, &Tensor)>) -> Result<(Tensor, (Tensor, Tensor))> {
        let (out, states) = self.stack.run(input, hc0.map(|(h, c)| vec![h.clone(), c.clone()]))?;
        let [h, c]: [Tensor; 2] = states.try_into().map_err(|_| Error::runtime("LSTM: expected two final states"))?;
        Ok((out, (h, c)))
    }
}

/// A single-step cell module's parameters and sizes.
struct Cell {
    mode: Mode,
    hidden_size: i64,
    weights: Weights,
}

impl Cell {
    fn new(mode: Mode, input_size: i64, hidden_size: i64, bias: bool) -> Result<Cell> {
        if hidden_size <= 0 || input_size < 0 {
            return Err(Error::value(format!(
                "{}Cell: expected input_size >= 0 and hidden_size > 0, got {input_size} and {hidden_size}",
                mode.name()
            )));
        }
        Ok(Cell { mode, hidden_size, weights: Weights::new(mode, input_size, hidden_size, bias) })
    }

    /// A zero state for `input` (`[batch, input_size]` or `[input_size]`).
    fn zeros(&self, input: &Tensor) -> Result<Tensor> {
        let mut sizes = input.sizes().to_vec();
        if let Some(last) = sizes.last_mut() {
            *last = self.hidden_size;
        }
        ops::zeros::call(&sizes, Some(input.dtype()), None, Some(input.device()), None)
    }
}

macro_rules! cell_module {
    ($(#[$doc:meta])* $name:ident, $mode:expr) => {
        $(#[$doc])*
        pub struct $name {
            cell: Cell,
        }

        impl $name {
            /// A cell with biases.
            pub fn new(input_size: i64, hidden_size: i64) -> Self {
                Self::with_bias(input_size, hidden_size, true).expect(concat!(
                    stringify!($name),
                    "::new: invalid sizes (with_bias returns the error)"
                ))
            }

            /// A cell with or without `bias_ih`/`bias_hh`.
            pub fn with_bias(input_size: i64, hidden_size: i64, bias: bool) -> Result<Self> {
                Ok($name { cell: Cell::new($mode, input_size, hidden_size, bias)? })
            }
        }

        impl Module for $name {
            /// One step from a zero state.
            fn forward(&self, input: &Tensor) -> Result<Tensor> {
                self.first_step(input)
            }

            fn visit(&self, f: &mut dyn FnMut(&str, &Tensor, Slot)) {
                self.cell.weights.visit("", f)
            }
        }
    };
}

cell_module!(
    /// `nn.RNNCell`: one `tanh` (or `relu`, with [`RNNCell::with_nonlinearity`]) step.
    RNNCell,
    Mode::Tanh
);
cell_module!(
    /// `nn.LSTMCell`: one LSTM step.
    LSTMCell,
    Mode::Lstm
);
cell_module!(
    /// `nn.GRUCell`: one GRU step.
    GRUCell,
    Mode::Gru
);

impl RNNCell {
    /// A cell with the given non-linearity.
    pub fn with_nonlinearity(
        input_size: i64,
        hidden_size: i64,
        bias: bool,
        nonlinearity: Nonlinearity,
    ) -> Result<Self> {
        let mode = if nonlinearity == Nonlinearity::Relu { Mode::Relu } else { Mode::Tanh };
        Ok(RNNCell { cell: Cell::new(mode, input_size, hidden_size, bias)? })
    }

    fn first_step(&self, input: &Tensor) -> Result<Tensor> {
        self.forward_with(input, None)
    }

    /// The next hidden state from `input` (`[batch, input_size]` or `[input_size]`) and `hx`
    /// (zeros when `None`).
    pub fn forward_with(&self, input: &Tensor, hx: Option<&Tensor>) -> Result<Tensor> {
        let w = &self.cell.weights;
        let h = match hx {
            Some(h) => h.clone(),
            None => self.cell.zeros(input)?,
        };
        let f = if self.cell.mode == Mode::Relu { ops::rnn_relu_cell::call } else { ops::rnn_tanh_cell::call };
        f(input, &h, &w.w_ih, &w.w_hh, w.b_ih.as_ref(), w.b_hh.as_ref())
    }
}

impl GRUCell {
    fn first_step(&self, input: &Tensor) -> Result<Tensor> {
        self.forward_with(input, None)
    }

    /// The next hidden state from `input` and `hx` (zeros when `None`).
    pub fn forward_with(&self, input: &Tensor, hx: Option<&Tensor>) -> Result<Tensor> {
        let w = &self.cell.weights;
        let h = match hx {
            Some(h) => h.clone(),
            None => self.cell.zeros(input)?,
        };
        ops::gru_cell::call(input, &h, &w.w_ih, &w.w_hh, w.b_ih.as_ref(), w.b_hh.as_ref())
    }
}

impl LSTMCell {
    fn first_step(&self, input: &Tensor) -> Result<Tensor> {
        Ok(self.forward_with(input, None)?.0)
    }

    /// `(h', c')` from `input` and `(h, c)` (zeros when `None`).
    pub fn forward_with(&self, input: &Tensor, hc: Option<(&Tensor, &Tensor)>) -> Result<(Tensor, Tensor)> {
        let w = &self.cell.weights;
        let (h, c) = match hc {
            Some((h, c)) => (h.clone(), c.clone()),
            None => (self.cell.zeros(input)?, self.cell.zeros(input)?),
        };
        ops::lstm_cell::call(input, &[h, c], &w.w_ih, &w.w_hh, w.b_ih.as_ref(), w.b_hh.as_ref())
    }
}
