//! PostgreSQL's own pseudo-random generator (`src/common/pg_prng.c`: xoroshiro128** 1.0,
//! seeded through splitmix64), bit for bit, and the order in which pgbench 15 hands out its
//! states from `--random-seed`. With them, a run given the same seed draws the same values
//! as pgbench: the script functions (`random()`, `random_exponential()`, ...), `permute`,
//! `:default_seed`, the built-in scripts' `aid`/`bid`/`tid`/`delta` and the weighted choice
//! of a script (issue 38).
//!
//! pgbench's seeding, from its `main()`: a base sequence is seeded with the seed; each client
//! `0..clients` takes one draw from it to seed its function state (`cs_func_rs`); the next
//! draw is `:default_seed`; then each thread `0..threads` takes three draws, seeding its
//! script-choice, throttle and log-sampling states, in that order. pgbench never runs more
//! threads than clients.

/// One `pg_prng_state`. `Copy`, so a client saves it at a transaction's start and puts it
/// back for a retry (pgbench 15 does the same, so a retry replays the same values).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PgPrng {
    s0: u64,
    s1: u64,
}

impl PgPrng {
    /// `pg_prng_seed`: two splitmix64 outputs; should both be zero (a fixed point of the
    /// generator), Knuth's LCG constants stand in, as `pg_prng_seed_check` puts them.
    pub fn seeded(seed: u64) -> PgPrng {
        let mut sm = seed;
        let s0 = splitmix64(&mut sm);
        let s1 = splitmix64(&mut sm);
        if s0 == 0 && s1 == 0 {
            PgPrng {
                s0: 0x5851_F42D_4C95_7F2D,
                s1: 0x1405_7B7E_F767_814F,
            }
        } else {
            PgPrng { s0, s1 }
        }
    }

    /// `pg_prng_uint64`: the next 64-bit output.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let s0 = self.s0;
        let sx = self.s1 ^ s0;
        let val = s0.wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        self.s0 = s0.rotate_left(24) ^ sx ^ (sx << 16);
        self.s1 = sx.rotate_left(37);
        val
    }

    /// `pg_prng_uint64_range(state, 0, max)`: uniform in `[0, max]` by bitmask rejection on
    /// the high bits; `max == 0` draws nothing.
    #[inline]
    pub fn below_or_eq(&mut self, max: u64) -> u64 {
        if max == 0 {
            return 0;
        }
        let shift = max.leading_zeros();
        loop {
            let v = self.next_u64() >> shift;
            if v <= max {
                return v;
            }
        }
    }

    /// pgbench's `getrand(state, min, max)`: uniform over `[min, max]`, `min <= max`, the
    /// range's width fitting a uint64 (the caller checks what the user gave).
    #[inline]
    pub fn getrand(&mut self, min: i64, max: i64) -> i64 {
        min.wrapping_add(self.below_or_eq(max.wrapping_sub(min) as u64) as i64)
    }

    /// `pg_prng_double`: uniform in `[0, 1)` from the 52 high bits (a multiplication by a
    /// power of two is exact, so this is C's `ldexp` result).
    #[inline]
    pub fn double(&mut self) -> f64 {
        (self.next_u64() >> 12) as f64 * (1.0 / (1u64 << 52) as f64)
    }

    /// A standard normal variate by the basic Box-Muller transform on two draws in `(0, 1]`,
    /// as pgbench 15's `getGaussianRand` computes it (later `pg_prng_double_normal`).
    #[inline]
    pub fn double_normal(&mut self) -> f64 {
        let u1 = 1.0 - self.double();
        let u2 = 1.0 - self.double();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).sin()
    }
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut v = *state;
    v = (v ^ (v >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    v = (v ^ (v >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    v ^ (v >> 31)
}

/// The states pgbench 15 derives from `--random-seed` for a run of `clients` clients on
/// `threads` threads (see the module's header).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgbenchSeeds {
    pub seed: u64,
    pub clients: u32,
    /// As pgbench uses it: at least 1, at most `clients`.
    pub threads: u32,
    /// The base sequence's draws pgbench makes, taken once: every client's terminal reads
    /// its own, and redrawing them per client would cost the square of the clients.
    base: Vec<u64>,
}

impl PgbenchSeeds {
    pub fn new(seed: u64, clients: u32, threads: u32) -> PgbenchSeeds {
        let clients = clients.max(1);
        let threads = threads.clamp(1, clients);
        let mut sequence = PgPrng::seeded(seed);
        let count = clients as usize + 1 + 3 * threads as usize;
        PgbenchSeeds {
            seed,
            clients,
            threads,
            base: (0..count).map(|_| sequence.next_u64()).collect(),
        }
    }

    /// The `n`-th draw (from 0) of the base sequence.
    fn base_draw(&self, n: u64) -> u64 {
        if let Some(&d) = usize::try_from(n).ok().and_then(|i| self.base.get(i)) {
            return d;
        }
        // Past pgbench's draws (a client numbered beyond the run's count): go on drawing.
        let mut base = PgPrng::seeded(self.seed);
        for _ in 0..n {
            base.next_u64();
        }
        base.next_u64()
    }

    /// Client `client`'s function state (`cs_func_rs`): what its `random*()` draw from.
    pub fn client(&self, client: u32) -> PgPrng {
        PgPrng::seeded(self.base_draw(u64::from(client)))
    }

    /// `:default_seed`, the hash functions' and `permute`'s default seed.
    pub fn default_seed(&self) -> i64 {
        self.base_draw(u64::from(self.clients)) as i64
    }

    /// The script-choice state client `client` draws from: its pgbench thread's exactly when
    /// it is the thread's first client. pgbench's clients of one thread share that state in
    /// whatever order the server answers them, which no other run can reproduce; so a later
    /// client of a thread gets a state of its own, seeded from the thread's seed and its
    /// position: reproducible, and equal to pgbench's choices only with one client per
    /// thread (`-c == -j`) or one script.
    pub fn client_choose(&self, client: u32) -> PgPrng {
        let (thread, position) = self.thread_of(client);
        let n = u64::from(self.clients) + 1 + 3 * u64::from(thread);
        let seed = self.base_draw(n);
        if position == 0 {
            PgPrng::seeded(seed)
        } else {
            PgPrng::seeded(seed ^ u64::from(position).wrapping_mul(0x9E37_79B9_7F4A_7C15))
        }
    }

    /// The pgbench thread that runs `client`, and the client's position among its clients:
    /// pgbench deals clients in contiguous blocks, thread `t` taking
    /// `(clients - dealt + threads - t - 1) / (threads - t)` of them.
    pub fn thread_of(&self, client: u32) -> (u32, u32) {
        let mut dealt = 0;
        for t in 0..self.threads {
            let n = (self.clients - dealt + self.threads - t - 1) / (self.threads - t);
            if client < dealt + n {
                return (t, client - dealt);
            }
            dealt += n;
        }
        // A client past the run's count (an independent group's own numbering): the last
        // thread's, after its own.
        (self.threads - 1, client.saturating_sub(dealt))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generator_follows_xoroshiro128_starstar_and_splitmix64() {
        // splitmix64's published first output for seed value 0; the generator's first output from
        // (1, 0) is rotl(5, 7) * 9.
        let mut sm = 0u64;
        assert_eq!(splitmix64(&mut sm), 0xE220_A839_7B1D_CDAF);
        let mut p = PgPrng { s0: 1, s1: 0 };
        assert_eq!(p.next_u64(), 5760);
        assert_eq!(p.below_or_eq(0), 0);
        let mut p = PgPrng::seeded(42);
        for _ in 0..1000 {
            assert!(p.below_or_eq(6) <= 6);
            let d = p.double();
            assert!((0.0..1.0).contains(&d));
        }
    }

    #[test]
    fn getrand_covers_the_whole_int64_range_without_overflow() {
        let mut p = PgPrng::seeded(3);
        let v = p.getrand(i64::MIN, i64::MAX);
        assert_eq!(p.getrand(5, 5), 5);
        let again = PgPrng::seeded(3).getrand(i64::MIN, i64::MAX);
        assert_eq!(v, again);
    }

    #[test]
    fn default_seed_is_pgbench_s_draw_after_one_per_client() {
        // What pgbench 15 set :default_seed to with --random-seed=7 and one client.
        assert_eq!(
            PgbenchSeeds::new(7, 1, 1).default_seed(),
            -2_715_325_821_952_477_995
        );
    }

    #[test]
    fn threads_get_contiguous_blocks_as_pgbench_deals_them() {
        // 7 clients on 3 threads: 3, 2, 2 (the first threads take the remainder).
        let s = PgbenchSeeds::new(1, 7, 3);
        let got: Vec<(u32, u32)> = (0..7).map(|c| s.thread_of(c)).collect();
        assert_eq!(
            got,
            [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (2, 0), (2, 1)]
        );
        // More threads than clients: pgbench runs one thread per client.
        let s = PgbenchSeeds::new(1, 2, 8);
        assert_eq!(s.threads, 2);
        assert_eq!(s.thread_of(1), (1, 0));
    }

    #[test]
    fn seeds_come_from_one_base_sequence_in_pgbench_s_order() {
        let s = PgbenchSeeds::new(99, 3, 2);
        let mut base = PgPrng::seeded(99);
        let draws: Vec<u64> = (0..60).map(|_| base.next_u64()).collect();
        assert_eq!(s.client(0), PgPrng::seeded(draws[0]));
        assert_eq!(s.client(2), PgPrng::seeded(draws[2]));
        assert_eq!(s.default_seed(), draws[3] as i64);
        // 3 clients on 2 threads: clients 0 and 1 on thread 0, client 2 on thread 1.
        assert_eq!(s.client_choose(0), PgPrng::seeded(draws[4]));
        assert_eq!(s.client_choose(2), PgPrng::seeded(draws[7]));
        assert_ne!(s.client_choose(1), s.client_choose(0));
        assert_eq!(s.client_choose(1), s.client_choose(1));
        // A client past the run's count goes on along the same sequence.
        assert_eq!(s.client(50), PgPrng::seeded(draws[50]));
    }
}
