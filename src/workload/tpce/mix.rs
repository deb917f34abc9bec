//! The customer emulator's transaction mix (tpce.md §3.1, §4): a deck per client with TPC-E's
//! weights per 1,000 cards — Broker-Volume 49, Customer-Position 130, Market-Watch 180,
//! Security-Detail 140, Trade-Lookup 80, Trade-Order 101, Trade-Status 190, Trade-Update 20 —
//! shuffled (Fisher–Yates, as EGen's Knuth shuffle) and drawn without replacement, reshuffled
//! when used up. The 890 cards leave 110 of 1,000 to Trade-Result and Market-Feed, which the
//! market emulator issues (issue 12), not the deck. A phase's `mix` replaces the deck as it does
//! for every workload.

use rand::seq::SliceRandom;

use crate::workload::Rng;

/// The customer types, in the order of their indexes everywhere in `tpce`.
pub const CE_TYPES: [&str; 8] = [
    "broker_volume",
    "customer_position",
    "market_watch",
    "security_detail",
    "trade_lookup",
    "trade_order",
    "trade_status",
    "trade_update",
];

pub const BROKER_VOLUME: usize = 0;
pub const CUSTOMER_POSITION: usize = 1;
pub const MARKET_WATCH: usize = 2;
pub const SECURITY_DETAIL: usize = 3;
pub const TRADE_LOOKUP: usize = 4;
pub const TRADE_ORDER: usize = 5;
pub const TRADE_STATUS: usize = 6;
pub const TRADE_UPDATE: usize = 7;

/// The types the market emulator issues (tpce.md §3.1 rows 3, 6, 11, 12), never drawn: their
/// indexes follow the customer types'.
pub const EMULATED_TYPES: [&str; 4] = [
    "trade_result",
    "market_feed",
    "data_maintenance",
    "trade_cleanup",
];

pub const TRADE_RESULT: usize = 8;
pub const MARKET_FEED: usize = 9;
pub const DATA_MAINTENANCE: usize = 10;
pub const TRADE_CLEANUP: usize = 11;

/// The decision-support types that run on a set's `dss` database unless a run file says
/// otherwise (tpce.md §8: our reading; their inputs address only pre-loaded history, so an
/// independent copy of the database serves them).
pub const DEFAULT_DSS_TYPES: [&str; 2] = ["trade_lookup", "trade_update"];

/// Cards per type in one deck (tpce.md §3.1).
pub const CARDS: [u32; 8] = [49, 130, 180, 140, 80, 101, 190, 20];

/// One client's deck.
#[derive(Debug, Clone)]
pub struct Deck {
    cards: Vec<u8>,
    next: usize,
}

impl Deck {
    pub fn new() -> Deck {
        let mut cards = Vec::with_capacity(CARDS.iter().sum::<u32>() as usize);
        for (t, &n) in CARDS.iter().enumerate() {
            cards.extend(std::iter::repeat_n(t as u8, n as usize));
        }
        Deck {
            next: cards.len(),
            cards,
        }
    }

    /// The next card's type; a used-up deck is shuffled first.
    pub fn draw(&mut self, rng: &mut Rng) -> usize {
        if self.next >= self.cards.len() {
            self.cards.shuffle(rng);
            self.next = 0;
        }
        self.next += 1;
        usize::from(self.cards[self.next - 1])
    }
}

impl Default for Deck {
    fn default() -> Self {
        Deck::new()
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    #[test]
    fn every_deck_holds_the_weights_exactly_and_is_shuffled() {
        let mut rng = Rng::seed_from_u64(4);
        let mut deck = Deck::new();
        let total: u32 = CARDS.iter().sum();
        assert_eq!(total, 890);
        for _ in 0..2 {
            let draws: Vec<usize> = (0..total).map(|_| deck.draw(&mut rng)).collect();
            for (t, &n) in CARDS.iter().enumerate() {
                assert_eq!(draws.iter().filter(|&&d| d == t).count() as u32, n, "{t}");
            }
            // Not in type order: the first 49 cards are not all Broker-Volume.
            assert!(draws[..49].iter().any(|&d| d != BROKER_VOLUME));
        }
        assert_eq!(CE_TYPES[TRADE_ORDER], "trade_order");
    }
}
