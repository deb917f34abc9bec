//! The deck of cards (TPC-V reference kit, section 4.2): a client draws the next card in order
//! and reshuffles when the deck is used up, so the configured ratios hold exactly over every
//! full deck, whatever the targets' speeds. A slow target slows the client that drew it
//! instead of letting the other targets run ahead.
//!
//! A target deck may play each card for a run of transactions. The kit's clients hand each
//! transaction to a connector process that owns the group's database sessions; tidebench's
//! clients hold a session per target themselves, so one card per transaction wakes a different
//! backend every time: on 2 cores, 4 groups ran at 0.5–0.6 of one target's throughput (README,
//! Performance). Runs keep the ratios exact over every full deck, only the deck is longer;
//! [`CardRun::Auto`] sizes them from the deck's own pace so that a full deck lasts about
//! [`AUTO_DECK_TIME`], which leaves slow or paced transactions one card each.

use std::time::{Duration, Instant};

use rand::seq::SliceRandom;

use crate::workload::Rng;

use super::error::DeckError;

/// How many transactions in a row a drawn card is played for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CardRun {
    /// Always this many (1 = the kit's one card per transaction).
    Fixed(u32),
    /// Sized at each reshuffle so a full deck lasts about [`AUTO_DECK_TIME`].
    Auto,
}

/// How long a full deck of runs should last under [`CardRun::Auto`]: short against the 1 s
/// intervals and the phases, so the shares they show stay exact to within a few per mille.
pub const AUTO_DECK_TIME: Duration = Duration::from_millis(20);
/// The longest automatic run: past about 64 transactions a run's switch costs nothing
/// measurable (4 select-only groups: 0.52 of one target at 1, 0.72 at 8, 0.85 at 64).
pub const AUTO_MAX_RUN: u32 = 64;

/// A shuffled list of cards drawn in order, each played for a run of draws.
#[derive(Debug, Clone)]
pub struct Deck<T> {
    cards: Vec<T>,
    next: usize,
    mode: CardRun,
    /// Draws per card in the current deck, and draws left of the current card.
    run: u32,
    left: u32,
    /// When the current deck was shuffled (automatic runs only).
    dealt: Option<Instant>,
}

impl<T: Copy> Deck<T> {
    /// A deck holding `count` copies of each card; shuffled before the first draw.
    pub fn new(counts: &[(T, u32)]) -> Deck<T> {
        let mut cards = Vec::with_capacity(counts.iter().map(|(_, n)| *n as usize).sum());
        for (card, n) in counts {
            cards.extend(std::iter::repeat_n(*card, *n as usize));
        }
        let next = cards.len();
        Deck {
            cards,
            next,
            mode: CardRun::Fixed(1),
            run: 1,
            left: 0,
            dealt: None,
        }
    }

    /// The same deck playing its cards in runs; `run` is the first deck's run length under
    /// [`CardRun::Auto`] (the run a previous deck of the client reached).
    pub fn with_runs(mut self, mode: CardRun, run: u32) -> Deck<T> {
        self.mode = mode;
        self.run = match mode {
            CardRun::Fixed(n) => n.max(1),
            CardRun::Auto => run.clamp(1, AUTO_MAX_RUN),
        };
        self
    }

    /// Draws per card in the current deck.
    pub fn run(&self) -> u32 {
        self.run
    }

    pub fn len(&self) -> usize {
        self.cards.len()
    }

    pub fn is_empty(&self) -> bool {
        self.cards.is_empty()
    }

    /// The next card; None only for an empty deck.
    #[inline]
    pub fn draw(&mut self, rng: &mut Rng) -> Option<T> {
        if self.left > 0 {
            self.left -= 1;
            return Some(self.cards[self.next - 1]);
        }
        if self.next >= self.cards.len() {
            if self.cards.is_empty() {
                return None;
            }
            self.deal(rng);
        }
        let card = self.cards[self.next];
        self.next += 1;
        self.left = self.run - 1;
        Some(card)
    }

    #[cold]
    fn deal(&mut self, rng: &mut Rng) {
        if self.mode == CardRun::Auto {
            let now = Instant::now();
            if let Some(dealt) = self.dealt {
                self.run = auto_run(now - dealt, self.cards.len() as u32 * self.run, self.run);
            }
            self.dealt = Some(now);
        }
        self.cards.shuffle(rng);
        self.next = 0;
    }
}

/// The run for the next deck, from how long the last one took for `draws` draws at `run`:
/// as many as fit [`AUTO_DECK_TIME`], between 1 and [`AUTO_MAX_RUN`], moving by at most a
/// factor of 4 per deck so one stall or one quick deck does not swing it.
fn auto_run(took: Duration, draws: u32, run: u32) -> u32 {
    let per_draw = took.as_secs_f64() / f64::from(draws.max(1));
    let cards = f64::from(draws.max(1) / run.max(1));
    let want = if per_draw > 0.0 {
        AUTO_DECK_TIME.as_secs_f64() / (per_draw * cards)
    } else {
        f64::from(AUTO_MAX_RUN)
    };
    let lo = (run / 4).max(1);
    let hi = run.saturating_mul(4).min(AUTO_MAX_RUN);
    (want.floor() as u32).clamp(lo, hi.max(lo))
}

/// Card counts for `weights` (percent-like numbers with at most two decimals): the smallest
/// deck that represents them exactly, or, with `size`, a deck of that many cards apportioned by
/// largest remainder (exact only when the weights allow it).
pub fn card_counts(weights: &[f64], size: Option<u32>) -> Result<Vec<u32>, DeckError> {
    if weights.iter().any(|w| !w.is_finite() || *w < 0.0) {
        return Err(DeckError::NotPositive);
    }
    // Hundredths of a percent are exact enough for any share a person writes.
    let units: Vec<u64> = weights.iter().map(|w| (w * 100.0).round() as u64).collect();
    let total: u64 = units.iter().sum();
    if total == 0 {
        return Err(DeckError::AllZero);
    }
    if let Some(size) = size {
        if size == 0 {
            return Err(DeckError::NoCards);
        }
        return Ok(largest_remainder(&units, total, u64::from(size)));
    }
    let g = units.iter().copied().filter(|u| *u > 0).fold(0, gcd);
    Ok(units.iter().map(|u| (u / g) as u32).collect())
}

fn largest_remainder(units: &[u64], total: u64, size: u64) -> Vec<u32> {
    let mut counts: Vec<u64> = units.iter().map(|u| u * size / total).collect();
    let mut rest: Vec<(u64, usize)> = units
        .iter()
        .enumerate()
        .map(|(i, u)| ((u * size) % total, i))
        .collect();
    rest.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let missing = size - counts.iter().sum::<u64>();
    for (_, i) in rest.into_iter().take(missing as usize) {
        counts[i] += 1;
    }
    counts.into_iter().map(|c| c as u32).collect()
}

pub fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn smallest_deck_is_exact() {
        assert_eq!(
            card_counts(&[10.0, 20.0, 30.0, 40.0], None).unwrap(),
            vec![1, 2, 3, 4]
        );
        assert_eq!(
            card_counts(&[5.0, 10.0, 25.0, 60.0], None).unwrap(),
            vec![1, 2, 5, 12]
        );
        assert_eq!(
            card_counts(&[50.0, 0.0, 50.0], None).unwrap(),
            vec![1, 0, 1]
        );
        assert_eq!(
            card_counts(&[33.33, 66.67], None).unwrap(),
            vec![3333, 6667]
        );
        assert_eq!(
            card_counts(&[10.0, 20.0, 30.0, 40.0], Some(20)).unwrap(),
            vec![2, 4, 6, 8]
        );
        assert_eq!(
            card_counts(&[1.0, 1.0, 1.0], Some(4))
                .unwrap()
                .iter()
                .sum::<u32>(),
            4
        );
        assert!(card_counts(&[0.0, 0.0], None).is_err());
    }

    #[test]
    fn every_full_deck_holds_the_ratios() {
        let mut deck = Deck::new(&[('a', 1), ('b', 2), ('c', 5), ('d', 12)]);
        let mut rng = Rng::seed_from_u64(3);
        for _ in 0..50 {
            let mut seen = [0u32; 4];
            for _ in 0..deck.len() {
                let c = deck.draw(&mut rng).unwrap();
                seen[(c as u8 - b'a') as usize] += 1;
            }
            assert_eq!(seen, [1, 2, 5, 12]);
        }
    }

    #[test]
    fn runs_repeat_each_card_and_keep_the_ratios() {
        let mut deck = Deck::new(&[('a', 1), ('b', 3)]).with_runs(CardRun::Fixed(5), 1);
        let mut rng = Rng::seed_from_u64(4);
        for _ in 0..20 {
            let drawn: Vec<char> = (0..deck.len() * 5)
                .map(|_| deck.draw(&mut rng).unwrap())
                .collect();
            assert!(drawn.chunks(5).all(|run| run.iter().all(|c| *c == run[0])));
            assert_eq!(drawn.iter().filter(|c| **c == 'a').count(), 5);
        }
    }

    #[test]
    fn automatic_runs_fill_the_deck_time() {
        let ms = Duration::from_millis;
        // 4 cards at 50 µs a draw: 100 draws fill 20 ms, reached by steps of at most 4×.
        assert_eq!(auto_run(Duration::from_micros(200), 4, 1), 4);
        assert_eq!(auto_run(Duration::from_micros(800), 16, 4), 16);
        assert_eq!(auto_run(ms(3), 64, 16), 64);
        // Slow (or paced) transactions fall back to one card each, the kit's behaviour.
        assert_eq!(auto_run(ms(40), 4, 1), 1);
        assert_eq!(auto_run(ms(400), 256, 64), 16);
        // A deck drawn in no measurable time grows as fast as allowed.
        assert_eq!(auto_run(Duration::ZERO, 4, 2), 8);
    }

    #[test]
    fn same_seed_same_sequence() {
        let draw = |seed| {
            let mut deck = Deck::new(&[(0u8, 3), (1, 7)]);
            let mut rng = Rng::seed_from_u64(seed);
            (0..100)
                .map(|_| deck.draw(&mut rng).unwrap())
                .collect::<Vec<_>>()
        };
        assert_eq!(draw(9), draw(9));
        assert_ne!(draw(9), draw(10));
    }
}
