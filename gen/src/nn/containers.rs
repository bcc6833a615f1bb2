//! `nn.ModuleList` and `nn.ModuleDict`: containers that name their children's tensors
//! (`{i}.…`, `{key}.…`) without defining a forward pass of their own.

use super::{visit_child, Module, Slot};
use crate::{Error, Result, Tensor};

/// Layers held in order, named `"{i}.…"` in the state dict; the caller decides how to run them
/// (iterate with [`ModuleList::iter`]).
#[derive(Default)]
pub struct ModuleList {
    modules: Vec<Box<dyn Module>>,
}

impl ModuleList {
    /// An empty list.
    pub fn new() -> Self {
        ModuleList::default()
    }

    /// Appends a module.
    pub fn push(&mut self, module: impl Module + 'static) {
        self.modules.push(Box::new(module));
    }

    /// The number of modules.
    pub fn len(&self) -> usize {
        self.modules.len()
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.modules.is_empty()
    }

    /// The `i`-th module.
    pub fn get(&self, i: usize) -> Option<&dyn Module> {
        self.modules.get(i).map(|m| m.as_ref())
    }

    /// The modules in order.
    pub fn iter(&self) -> impl Iterator<Item = &dyn Module> {
        self.modules.iter().map(|m| m.as_ref())
    }
}

impl<M: Module + 'static> FromIterator<M> for ModuleList {
    fn from_iter<I: IntoIterator<Item = M>>(iter: I) -> Self {
        ModuleList { modules: iter.into_iter().map(|m| Box::new(m) as Box<dyn Module>).collect() }
    }
}

impl Module for ModuleList {
    /// A list has no forward pass of its own (as in PyTorch): iterate over it instead.
    fn forward(&self, _input: &Tensor) -> Result<Tensor> {
        Err(Error::runtime("ModuleList has no forward(); iterate over its modules").in_op("ModuleList"))
    }

    fn visit(&self, f: &mut dyn FnMut(&str, &Tensor, Slot)) {
        for (i, m) in self.modules.iter().enumerate() {
            visit_child(&i.to_string(), m.as_ref(), f);
        }
    }

    fn set_training(&mut self, training: bool) {
        for m in &mut self.modules {
            m.set_training(training);
        }
    }
}

/// Named modules in insertion order, named `"{key}.…"` in the state dict.
#[derive(Default)]
pub struct ModuleDict {
    modules: Vec<(String, Box<dyn Module>)>,
}

impl ModuleDict {
    /// An empty dict.
    pub fn new() -> Self {
        ModuleDict::default()
    }

    /// Adds `module` under `key`, replacing (in place) a module already there.
    pub fn insert(&mut self, key: &str, module: impl Module + 'static) {
        let boxed: Box<dyn Module> = Box::new(module);
        match self.modules.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = boxed,
            None => self.modules.push((key.to_string(), boxed)),
        }
    }

    /// The module under `key`.
    pub fn get(&self, key: &str) -> Option<&dyn Module> {
        self.modules.iter().find(|(k, _)| k == key).map(|(_, m)| m.as_ref())
    }

    /// The keys in insertion order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.modules.iter().map(|(k, _)| k.as_str())
    }

    /// The number of modules.
    pub fn len(&self) -> usize {
        self.modules.len()
    }

    /// Whether the dict is empty.
    pub fn is_empty(&self) -> bool {
        self.modules.is_empty()
    }
}

impl Module for ModuleDict {
    /// A dict has no forward pass of its own (as in PyTorch): look modules up instead.
    fn forward(&self, _input: &Tensor) -> Result<Tensor> {
        Err(Error::runtime("ModuleDict has no forward(); look its modules up by key").in_op("ModuleDict"))
    }

    fn visit(&self, f: &mut dyn FnMut(&str, &Tensor, Slot)) {
        for (k, m) in &self.modules {
            visit_child(k, m.as_ref(), f);
        }
    }

    fn set_training(&mut self, training: bool) {
        for (_, m) in &mut self.modules {
            m.set_training(training);
        }
    }
}
