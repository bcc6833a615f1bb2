//! Random number generators: [`Generator`] (PyTorch's `torch.Generator`) and the process-wide
//! default CPU generator behind [`manual_seed`].
//!
//! # The stream
//!
//! oxten uses the counter-based **Philox4x32-10** generator (Salmon et al., "Parallel random
//! numbers: as easy as 1, 2, 3", SC'11; the generator of PyTorch's CUDA backend), not PyTorch's
//! CPU mt19937, so values differ from `torch.rand` on CPU for the same seed. A generator's state
//! is a 64-bit seed (the Philox key) and a 64-bit offset (the next unused counter). One Philox
//! call maps a 128-bit counter to 128 random bits (a *block* of four `u32` words); an operator
//! asks the generator for the number of blocks it needs ([`Generator::reserve`]), which returns
//! a [`PhiloxStream`] and advances the offset, and then computes block `i` of that stream
//! wherever and in whatever order it likes. So:
//!
//! - the same seed gives the same values, and values never depend on the thread count or on how
//!   a kernel splits its work;
//! - the generator's lock is held only to read and advance the offset;
//! - [`Generator::get_state`] / [`Generator::set_state`] capture and replay everything (there is
//!   no hidden cache such as mt19937's spare Box-Muller sample).
//!
//! How an operator turns blocks into elements is up to the operator (see `kernels/src/random`).

use crate::error::{Error, Result};
use std::collections::hash_map::RandomState;
use std::fmt;
use std::hash::{BuildHasher, Hasher};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// The seed of a new [`Generator`]: PyTorch's `default_rng_seed_val`.
pub const DEFAULT_SEED: u64 = 67_280_421_310_721;

/// The first bytes of a serialized state (`OXtenPHilox`, format version 1).
const STATE_TAG: [u8; 4] = *b"OXP1";
/// Bytes of a serialized state: tag, seed, offset.
const STATE_LEN: usize = 4 + 8 + 8;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct State {
    seed: u64,
    offset: u64,
}

/// A random number generator: a cheap, cloneable handle to shared state (clones draw from the
/// same stream), like `torch.Generator`. Pass it to the `generator` argument of random
/// operators (`oxten::rand_generator(&[3], Some(&g))`); without one they use the default
/// generator ([`default_generator`]).
///
/// ```
/// use oxten_runtime::Generator;
/// let g = Generator::new();
/// g.manual_seed(42);
/// let state = g.get_state();
/// let a = g.reserve(1).block(0);
/// g.set_state(&state).unwrap();
/// assert_eq!(g.reserve(1).block(0), a);
/// ```
#[derive(Clone)]
pub struct Generator {
    inner: Arc<Mutex<State>>,
}

impl Generator {
    /// A generator seeded with [`DEFAULT_SEED`] (as `torch.Generator()` is).
    pub fn new() -> Generator {
        Generator::with_seed(DEFAULT_SEED)
    }

    /// A generator seeded with `seed`.
    pub fn with_seed(seed: u64) -> Generator {
        Generator { inner: Arc::new(Mutex::new(State { seed, offset: 0 })) }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // The state is two integers, always valid: a panic elsewhere cannot corrupt it.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Restarts the stream from `seed` (`Generator.manual_seed`); returns the generator.
    pub fn manual_seed(&self, seed: u64) -> &Generator {
        *self.lock() = State { seed, offset: 0 };
        self
    }

    /// Seeds from a non-deterministic source and returns the new seed (`Generator.seed`).
    pub fn seed(&self) -> u64 {
        let seed = nondeterministic_seed();
        self.manual_seed(seed);
        seed
    }

    /// The seed the stream started from (`Generator.initial_seed`).
    pub fn initial_seed(&self) -> u64 {
        self.lock().seed
    }

    /// The number of blocks drawn since the last seeding.
    pub fn offset(&self) -> u64 {
        self.lock().offset
    }

    /// The generator's state (`Generator.get_state`): 20 bytes, to give back to
    /// [`set_state`](Self::set_state) of this or any other generator.
    pub fn get_state(&self) -> Vec<u8> {
        let s = *self.lock();
        let mut v = Vec::with_capacity(STATE_LEN);
        v.extend_from_slice(&STATE_TAG);
        v.extend_from_slice(&s.seed.to_le_bytes());
        v.extend_from_slice(&s.offset.to_le_bytes());
        v
    }

    /// Restores a state from [`get_state`](Self::get_state) (`Generator.set_state`); the stream
    /// then continues exactly where it was when the state was taken.
    ///
    /// # Errors
    /// When `state` is not a state this version of oxten produced (wrong length or tag).
    pub fn set_state(&self, state: &[u8]) -> Result<()> {
        if state.len() != STATE_LEN || state[..4] != STATE_TAG {
            return Err(Error::value(format!(
                "Generator.set_state: expected a {STATE_LEN}-byte state from Generator::get_state (starting with \
                 {:?}), but got {} bytes{}",
                std::str::from_utf8(&STATE_TAG).unwrap_or_default(),
                state.len(),
                if state.len() == STATE_LEN { " with another tag" } else { "" }
            )));
        }
        let word = |i: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&state[i..i + 8]);
            u64::from_le_bytes(b)
        };
        *self.lock() = State { seed: word(4), offset: word(12) };
        Ok(())
    }

    /// Takes the next `blocks` Philox blocks for one operator: returns the stream they come from
    /// and advances the offset past them. Block `i` (`i < blocks`) of the result is
    /// [`PhiloxStream::block`]`(i)`.
    pub fn reserve(&self, blocks: u64) -> PhiloxStream {
        let mut s = self.lock();
        let stream = PhiloxStream { key: [s.seed as u32, (s.seed >> 32) as u32], start: s.offset };
        s.offset = s.offset.wrapping_add(blocks);
        stream
    }

    /// Whether two handles share one state.
    pub fn same_as(&self, other: &Generator) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// The device whose kernels this generator serves (always the CPU).
    pub fn device(&self) -> crate::Device {
        crate::Device::Cpu
    }
}

impl Default for Generator {
    fn default() -> Self {
        Generator::new()
    }
}

impl fmt::Debug for Generator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = *self.lock();
        f.debug_struct("Generator").field("seed", &s.seed).field("offset", &s.offset).finish()
    }
}

/// A seed from the OS's randomness (std's `RandomState` keys are drawn from it) mixed with the
/// time, so that two calls differ.
fn nondeterministic_seed() -> u64 {
    let mut h = RandomState::new().build_hasher();
    if let Ok(t) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        h.write_u128(t.as_nanos());
    }
    h.finish()
}

/// The process-wide default CPU generator, used by random operators called without a
/// `generator`. Like PyTorch 2.x's, it starts from a non-deterministic seed; call
/// [`manual_seed`] for reproducible results.
pub fn default_generator() -> Generator {
    static DEFAULT: OnceLock<Generator> = OnceLock::new();
    DEFAULT.get_or_init(|| Generator::with_seed(nondeterministic_seed())).clone()
}

/// Seeds the default generator (`torch.manual_seed`) and returns it.
pub fn manual_seed(seed: u64) -> Generator {
    let g = default_generator();
    g.manual_seed(seed);
    g
}

/// Seeds the default generator non-deterministically and returns the seed (`torch.seed`).
pub fn seed() -> u64 {
    default_generator().seed()
}

/// The seed the default generator started from (`torch.initial_seed`).
pub fn initial_seed() -> u64 {
    default_generator().initial_seed()
}

/// The default generator's state (`torch.get_rng_state`).
pub fn get_rng_state() -> Vec<u8> {
    default_generator().get_state()
}

/// Restores the default generator's state (`torch.set_rng_state`).
pub fn set_rng_state(state: &[u8]) -> Result<()> {
    default_generator().set_state(state)
}

// ---------------------------------------------------------------------------------------------
// Philox4x32-10
// ---------------------------------------------------------------------------------------------

const PHILOX_M0: u32 = 0xD251_1F53;
const PHILOX_M1: u32 = 0xCD9E_8D57;
const PHILOX_W0: u32 = 0x9E37_79B9;
const PHILOX_W1: u32 = 0xBB67_AE85;

#[inline(always)]
fn mulhilo(a: u32, b: u32) -> (u32, u32) {
    let p = u64::from(a) * u64::from(b);
    ((p >> 32) as u32, p as u32)
}

/// Philox4x32 with 10 rounds: 128 random bits from a 128-bit counter and a 64-bit key.
#[inline]
pub fn philox4x32_10(counter: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let mut c = counter;
    let mut k = key;
    for round in 0..10 {
        if round > 0 {
            k[0] = k[0].wrapping_add(PHILOX_W0);
            k[1] = k[1].wrapping_add(PHILOX_W1);
        }
        let (hi0, lo0) = mulhilo(PHILOX_M0, c[0]);
        let (hi1, lo1) = mulhilo(PHILOX_M1, c[2]);
        c = [hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0];
    }
    c
}

/// Blocks per call of [`PhiloxStream::blocks`].
pub const PHILOX_LANES: usize = 8;

/// The blocks one operator reserved: block `i` is Philox of the counter `start + i` under the
/// generator's seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PhiloxStream {
    key: [u32; 2],
    start: u64,
}

impl PhiloxStream {
    /// A stream for `seed` starting at block `offset` (what a generator in that state reserves).
    pub fn new(seed: u64, offset: u64) -> PhiloxStream {
        PhiloxStream { key: [seed as u32, (seed >> 32) as u32], start: offset }
    }

    /// The Philox key (the generator's seed).
    pub fn seed(&self) -> u64 {
        u64::from(self.key[0]) | (u64::from(self.key[1]) << 32)
    }

    /// The counter of block 0 (the generator's offset when the blocks were reserved): a device
    /// computes block `i` as Philox of the counter `start + i` under [`seed`](Self::seed).
    pub fn start(&self) -> u64 {
        self.start
    }

    /// Block `i`: four random `u32` words.
    #[inline]
    pub fn block(&self, i: u64) -> [u32; 4] {
        let c = self.start.wrapping_add(i);
        philox4x32_10([c as u32, (c >> 32) as u32, 0, 0], self.key)
    }

    /// Blocks `i .. i + PHILOX_LANES`, written word by word into `out` (block `i + j` in
    /// `out[4j .. 4j + 4]`). Computed lane-parallel so that the compiler can vectorize it
    /// (inlined, so that callers compiled for AVX2 or AVX-512 vectorize it for those).
    #[inline(always)]
    pub fn blocks(&self, i: u64, out: &mut [u32; 4 * PHILOX_LANES]) {
        const L: usize = PHILOX_LANES;
        let mut c0 = [0u32; L];
        let mut c1 = [0u32; L];
        let mut c2 = [0u32; L];
        let mut c3 = [0u32; L];
        for j in 0..L {
            let c = self.start.wrapping_add(i).wrapping_add(j as u64);
            c0[j] = c as u32;
            c1[j] = (c >> 32) as u32;
        }
        let mut k = self.key;
        for round in 0..10 {
            if round > 0 {
                k[0] = k[0].wrapping_add(PHILOX_W0);
                k[1] = k[1].wrapping_add(PHILOX_W1);
            }
            for j in 0..L {
                let p0 = u64::from(PHILOX_M0) * u64::from(c0[j]);
                let p1 = u64::from(PHILOX_M1) * u64::from(c2[j]);
                let n0 = (p1 >> 32) as u32 ^ c1[j] ^ k[0];
                let n2 = (p0 >> 32) as u32 ^ c3[j] ^ k[1];
                c1[j] = p1 as u32;
                c3[j] = p0 as u32;
                c0[j] = n0;
                c2[j] = n2;
            }
        }
        for j in 0..L {
            out[4 * j] = c0[j];
            out[4 * j + 1] = c1[j];
            out[4 * j + 2] = c2[j];
            out[4 * j + 3] = c3[j];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random123's known-answer vectors (`tests/kat_vectors`, philox4x32 10).
    #[test]
    fn philox_known_answers() {
        assert_eq!(philox4x32_10([0; 4], [0; 2]), [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]);
        assert_eq!(philox4x32_10([u32::MAX; 4], [u32::MAX; 2]), [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]);
        assert_eq!(
            philox4x32_10([0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344], [0xa4093822, 0x299f31d0]),
            [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1]
        );
    }

    #[test]
    fn lane_parallel_blocks_match_single_blocks() {
        let s = PhiloxStream::new(0x1234_5678_9abc_def0, u64::MAX - 3);
        let mut out = [0u32; 4 * PHILOX_LANES];
        s.blocks(1, &mut out);
        for j in 0..PHILOX_LANES {
            assert_eq!(out[4 * j..4 * j + 4], s.block(1 + j as u64));
        }
    }

    #[test]
    fn state_round_trip_and_errors() {
        let g = Generator::with_seed(7);
        g.reserve(5);
        let st = g.get_state();
        assert_eq!(st.len(), STATE_LEN);
        let h = Generator::new();
        h.set_state(&st).unwrap();
        assert_eq!((h.initial_seed(), h.offset()), (7, 5));
        assert!(h.set_state(&st[..10]).unwrap_err().message.contains("but got 10 bytes"));
        let mut bad = st.clone();
        bad[0] = b'X';
        assert!(h.set_state(&bad).unwrap_err().message.contains("another tag"));
        // Clones share the stream; `same_as` tells.
        let c = h.clone();
        c.reserve(2);
        assert_eq!(h.offset(), 7);
        assert!(c.same_as(&h) && !c.same_as(&g));
        assert_eq!(Generator::new().initial_seed(), DEFAULT_SEED);
    }

    #[test]
    fn seed_is_not_constant() {
        let g = Generator::new();
        let a = g.seed();
        let b = g.seed();
        assert_ne!(a, b);
        assert_eq!(g.initial_seed(), b);
    }
}
