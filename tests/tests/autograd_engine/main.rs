//! The autograd engine, driven by hand-written nodes (independent of the generated Autograd
//! kernels): a tiny differentiable library (`mul`, `add`, `exp`, `sum`, `pow3`, `copy_`) whose
//! forward runs the real operators under `no_grad` and records its own nodes, and whose backward
//! is written with the same functions, so `create_graph` records the backward pass.

mod accumulate;
mod checks;
mod custom;
mod errors;
mod execution;
mod generated;
mod hooks;
mod inference;
mod minilib;
mod pruning;
mod threads;
mod views;
