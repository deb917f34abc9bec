//! The deck of cards (TPC-V reference kit, section 4.2): a client draws the next card in order
//! and reshuffles when the deck is used up, so the configured ratios hold exactly over every
//! full deck, whatever the targets' speeds. A slow target slows the client that drew it
//! instead of letting the other targets run ahead.

use rand::seq::SliceRandom;

use crate::workload::Rng;

/// A shuffled list of cards drawn in order.
#[derive(Debug, Clone)]
pub struct Deck<T> {
    cards: Vec<T>,
    next: usize,
}

impl<T: Copy> Deck<T> {
    /// A deck holding `count` copies of each card; shuffled before the first draw.
    pub fn new(counts: &[(T, u32)]) -> Deck<T> {
        let mut cards = Vec::with_capacity(counts.iter().map(|(_, n)| *n as usize).sum());
        for (card, n) in counts {
            cards.extend(std::iter::repeat(*card).take(*n as usize));
        }
        let next = cards.len();
        Deck { cards, next }
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
        if self.next >= self.cards.len() {
            if self.cards.is_empty() {
                return None;
            }
            self.cards.shuffle(rng);
            self.next = 0;
        }
        let card = self.cards[self.next];
        self.next += 1;
        Some(card)
    }
}

/// Card counts for `weights` (percent-like numbers with at most two decimals): the smallest
/// deck that represents them exactly, or, with `size`, a deck of that many cards apportioned by
/// largest remainder (exact only when the weights allow it).
pub fn card_counts(weights: &[f64], size: Option<u32>) -> Result<Vec<u32>, String> {
    if weights.iter().any(|w| !w.is_finite() || *w < 0.0) {
        return Err("weights must be zero or positive numbers".into());
    }
    // Hundredths of a percent are exact enough for any share a person writes.
    let units: Vec<u64> = weights.iter().map(|w| (w * 100.0).round() as u64).collect();
    let total: u64 = units.iter().sum();
    if total == 0 {
        return Err("at least one weight must be above zero".into());
    }
    if let Some(size) = size {
        if size == 0 {
            return Err("deck_size must be at least 1".into());
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
