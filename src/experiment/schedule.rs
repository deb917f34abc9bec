//! The experiment's points (one per combination of the varied values, the last key varying
//! fastest) and its runs in the order they are made: the whole series once per repeat, back
//! to back, as the vPostgres study ran it — not one point R times in a row, so slow drift of
//! the host spreads over every point alike.

use std::collections::BTreeMap;

use super::vary::Vary;

/// One combination of values: `(key as written, value)` in `--vary` order.
#[derive(Debug, Clone, PartialEq)]
pub struct PointValues(pub Vec<(String, String)>);

impl PointValues {
    /// `clients=16 protocol=simple`.
    pub fn describe(&self) -> String {
        self.0
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    }

    pub fn map(&self) -> BTreeMap<String, String> {
        self.0.iter().cloned().collect()
    }

    /// A results dir name for run `repeat` of point `index` (0-based): `03-clients=16-r2`,
    /// with anything but letters, digits and `.=_-` replaced so it is one path component.
    pub fn dir_name(&self, index: usize, repeat: u32) -> String {
        let values: String = self
            .0
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("_")
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "._=-".contains(c) {
                    c
                } else {
                    '-'
                }
            })
            .take(80)
            .collect();
        format!("{:02}-{values}-r{repeat}", index + 1)
    }
}

/// Every combination of the varies' values, the last varying fastest.
pub fn grid(varies: &[Vary]) -> Vec<PointValues> {
    let mut points = vec![PointValues(Vec::new())];
    for v in varies {
        points = points
            .into_iter()
            .flat_map(|p| {
                v.values.iter().map(move |value| {
                    let mut next = p.0.clone();
                    next.push((v.name.clone(), value.clone()));
                    PointValues(next)
                })
            })
            .collect();
    }
    points
}

/// One run to make: point `point` (0-based) in repeat `repeat` (1-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunSlot {
    pub point: usize,
    pub repeat: u32,
}

/// The runs in the order they are made: the series, `repeat` times.
pub fn order(points: usize, repeat: u32) -> Vec<RunSlot> {
    (1..=repeat)
        .flat_map(|r| {
            (0..points).map(move |p| RunSlot {
                point: p,
                repeat: r,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_nests_the_last_key_fastest_and_repeats_run_the_whole_series() {
        let varies = [
            Vary::parse("protocol=simple,prepared").unwrap(),
            Vary::parse("clients=1,2,4").unwrap(),
        ];
        let g = grid(&varies);
        assert_eq!(g.len(), 6);
        assert_eq!(g[1].describe(), "protocol=simple clients=2");
        assert_eq!(g[3].describe(), "protocol=prepared clients=1");
        let o = order(2, 2);
        assert_eq!(
            o,
            [
                RunSlot {
                    point: 0,
                    repeat: 1
                },
                RunSlot {
                    point: 1,
                    repeat: 1
                },
                RunSlot {
                    point: 0,
                    repeat: 2
                },
                RunSlot {
                    point: 1,
                    repeat: 2
                }
            ]
        );
    }

    #[test]
    fn dir_names_are_one_safe_path_component() {
        let p = PointValues(vec![
            ("instance.set.shared_buffers".into(), "1GB".into()),
            ("group.A.think".into(), "0/1 s".into()),
        ]);
        assert_eq!(
            p.dir_name(2, 3),
            "03-instance.set.shared_buffers=1GB_group.A.think=0-1-s-r3"
        );
        assert!(!PointValues(vec![("k".into(), "../..".into())])
            .dir_name(0, 1)
            .contains('/'));
    }
}
