//! A workload before its data is known, in its two halves: [`Plugin`], what a plug-in's author
//! writes, as plain `async fn`s, and [`Kind`], what the rest of tidebench calls through `dyn`;
//! one blanket impl here turns the first into the second (boxing each future). A new workload
//! implements `WorkloadInfo` and `Plugin` and never writes the boxing, the `Option` around a
//! missing check, or a default it does not change.

use std::future::Future;
use std::sync::Arc;

use tokio_postgres::Client;

use super::{CheckOutcome, Loaded, Pending, Workload, WorkloadError};
use crate::config::{OptionValues, PreparePlan, WorkloadInfo};
use crate::event::Sink;
use crate::target::ResolvedTarget;

/// A workload before its data is known, as its author writes it; every `Plugin` is a [`Kind`].
/// The futures run on the caller's thread (see [`Pending`]), so they need not be `Send`.
pub trait Plugin: WorkloadInfo {
    /// True when a run must not go on over data of another scale than it asks for (tpce: the
    /// driver's inputs depend on the customer count); otherwise the data's scale is used with
    /// a warning.
    const REFUSES_OTHER_SCALE: bool = false;

    /// Checks that `client`'s database holds this workload's data (and whatever the resolved
    /// `options` need, e.g. TPC-C's functions for `procedures`, or tpce's trade days agreeing
    /// with the load's); returns the scale and facts found. A loaded workload starts with
    /// [`super::kit::MetaTable::read`].
    fn check_ready(
        &self,
        options: &OptionValues,
        client: &Client,
    ) -> impl Future<Output = Result<Loaded, WorkloadError>>;

    /// Creates the schema and loads the data of `plan` into `target` (on [`super::kit`]);
    /// load progress and the summary go to `events`.
    fn prepare(
        &self,
        plan: &PreparePlan,
        target: &ResolvedTarget,
        events: &Arc<dyn Sink>,
    ) -> impl Future<Output = Result<(), WorkloadError>>;

    /// The consistency conditions of `tidebench check`; `None` when the workload has none.
    fn check(
        &self,
        _client: &Client,
    ) -> Option<impl Future<Output = Result<Vec<CheckOutcome>, WorkloadError>>> {
        None::<std::future::Ready<_>>
    }

    /// The workload for data of `scale` with resolved `options`.
    fn build(&self, scale: u32, options: &OptionValues) -> Result<Arc<dyn Workload>, String>;
}

/// Lets a `&dyn Kind` be used where config wants a `&dyn WorkloadInfo`.
pub trait AsInfo {
    fn info(&self) -> &dyn WorkloadInfo;
}

impl<T: WorkloadInfo> AsInfo for T {
    fn info(&self) -> &dyn WorkloadInfo {
        self
    }
}

/// A workload before its data is known: what `prepare`, `check` and a run's readiness check
/// call through `dyn`, and the factory of the [`Workload`] a run drives. Every [`Plugin`] is
/// one (its methods say what each means); a workload implements `Plugin`, not this.
pub trait Kind: WorkloadInfo + AsInfo {
    /// [`Plugin::check_ready`], its future boxed.
    fn check_ready<'a>(
        &'a self,
        options: &'a OptionValues,
        client: &'a Client,
    ) -> Pending<'a, Result<Loaded, WorkloadError>>;

    /// [`Plugin::REFUSES_OTHER_SCALE`].
    fn refuses_other_scale(&self) -> bool;

    /// [`Plugin::prepare`], its future boxed.
    fn prepare<'a>(
        &'a self,
        plan: &'a PreparePlan,
        target: &'a ResolvedTarget,
        events: &'a Arc<dyn Sink>,
    ) -> Pending<'a, Result<(), WorkloadError>>;

    /// [`Plugin::check`], its future boxed.
    fn check<'a>(
        &'a self,
        client: &'a Client,
    ) -> Option<Pending<'a, Result<Vec<CheckOutcome>, WorkloadError>>>;

    /// [`Plugin::build`].
    fn build(&self, scale: u32, options: &OptionValues) -> Result<Arc<dyn Workload>, String>;
}

impl<T: Plugin> Kind for T {
    fn check_ready<'a>(
        &'a self,
        options: &'a OptionValues,
        client: &'a Client,
    ) -> Pending<'a, Result<Loaded, WorkloadError>> {
        Box::pin(Plugin::check_ready(self, options, client))
    }

    fn refuses_other_scale(&self) -> bool {
        T::REFUSES_OTHER_SCALE
    }

    fn prepare<'a>(
        &'a self,
        plan: &'a PreparePlan,
        target: &'a ResolvedTarget,
        events: &'a Arc<dyn Sink>,
    ) -> Pending<'a, Result<(), WorkloadError>> {
        Box::pin(Plugin::prepare(self, plan, target, events))
    }

    fn check<'a>(
        &'a self,
        client: &'a Client,
    ) -> Option<Pending<'a, Result<Vec<CheckOutcome>, WorkloadError>>> {
        let check = Plugin::check(self, client)?;
        Some(Box::pin(check))
    }

    fn build(&self, scale: u32, options: &OptionValues) -> Result<Arc<dyn Workload>, String> {
        Plugin::build(self, scale, options)
    }
}
