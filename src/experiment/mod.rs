//! Experiments: series of ordinary runs plus their analysis, as the seed studies made them
//! (a scalability sweep over client counts, a density series adding one instance at a time).
//! Each run is a normal results dir made by `runner::run`; the experiment dir adds
//! `experiment.json` (`results::experiment`) and `experiment.html` (`report::experiment`).
//! Experiments are resumable: a point whose results dir is complete is never run again.

pub mod analysis;
