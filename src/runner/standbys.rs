//! The run's standbys before anything starts (issue 54): `[[instance]]` tables declaring
//! `standby_of`, and the standbys a `promote` or `failover` event names. A name's role comes
//! from the home's record when the instance exists, else from the run file that will create
//! it, so a run that makes its own standby is checked as one that uses a made one.

use crate::config::{instances_used, Action, Disruption, InstancePlan, RunPlan};
use crate::instance::{self, Home, InstanceError};

use super::RunError;

/// What an instance is as a standby, before the run starts.
enum Role {
    /// A standby of this primary, not promoted.
    Standby(String),
    /// Made as a standby of this primary, and promoted since.
    Promoted(String),
    /// A primary.
    NotStandby,
    /// Neither in the home nor declared by the run.
    Missing,
}

fn role(plan: &RunPlan, home: &Home, name: &str) -> Result<Role, String> {
    match instance::find(home, name) {
        Ok(i) => Ok(match i.standby_of() {
            Some(p) if i.in_recovery() => Role::Standby(p.to_string()),
            Some(p) => Role::Promoted(p.to_string()),
            None => Role::NotStandby,
        }),
        Err(InstanceError::NotFound { .. }) => {
            Ok(match plan.instances.iter().find(|d| d.name == name) {
                Some(d) => d.standby_of.clone().map_or(Role::NotStandby, Role::Standby),
                None => Role::Missing,
            })
        }
        Err(e) => Err(e.to_string()),
    }
}

/// How to make `standby` a standby of `primary`.
fn made_by(standby: &str, primary: &str) -> String {
    format!(
        "make one with `tidebench instance start {standby} --standby-of {primary}` (--sync for \
         a synchronous one), or declare it in an [[instance]] table with standby_of = \
         \"{primary}\""
    )
}

/// A failover's standby: a standby of the event's target, not promoted yet.
pub fn check_failover(
    plan: &RunPlan,
    home: &Home,
    primary: &str,
    standby: &str,
) -> Result<(), String> {
    let fix = made_by(standby, primary);
    match role(plan, home, standby)? {
        Role::Standby(p) if p == primary => Ok(()),
        Role::Standby(p) => Err(format!(
            "'{standby}' is a standby of '{p}', not of '{primary}'; {fix}"
        )),
        Role::Promoted(_) => Err(format!(
            "'{standby}' was promoted already; destroy it and make a new standby"
        )),
        Role::NotStandby => Err(format!("'{standby}' is not a standby; {fix}")),
        Role::Missing => Err(format!(
            "no managed instance '{standby}' in this home; {fix}"
        )),
    }
}

/// A promote's target: a standby, not promoted yet, whose primary the run uses too (its
/// clients then follow the promotion from one to the other).
pub fn check_promote(plan: &RunPlan, home: &Home, standby: &str) -> Result<(), String> {
    let primary = match role(plan, home, standby)? {
        Role::Standby(p) => p,
        Role::Promoted(p) => {
            return Err(format!(
                "'{standby}' was promoted already (it was a standby of '{p}'); destroy it and \
                 make a new standby with `tidebench instance start {standby} --standby-of {p}`"
            ))
        }
        Role::NotStandby => {
            return Err(format!(
                "'{standby}' is not a standby, so there is nothing to promote; name a standby \
                 in `target`, made with `tidebench instance start NAME --standby-of {standby}`"
            ))
        }
        Role::Missing => {
            return Err(format!(
                "no managed instance '{standby}' in this home; make the standby first with \
                 `tidebench instance start {standby} --standby-of PRIMARY`"
            ))
        }
    };
    if !instances_used(plan).contains(&primary) {
        return Err(format!(
            "its primary '{primary}' is not in the run, so no client would follow the \
             promotion; give the groups a target over both, e.g. target = \
             \"instance:{primary},{standby}\", and fail '{primary}' in an event before it"
        ));
    }
    Ok(())
}

/// A promote of an instance the home does not have: how to make it, naming as its primary
/// the last instance failed before it (most likely the one it takes over from).
pub fn missing(plan: &RunPlan, promote: &Disruption) -> String {
    let primary = plan
        .events
        .iter()
        .rfind(|e| {
            e.at <= promote.at
                && e.target != promote.target
                && matches!(e.action, Action::Fail { .. })
        })
        .map_or("PRIMARY", |e| e.target.as_str());
    format!(
        "no managed instance '{}' in this home; {}",
        promote.target,
        made_by(&promote.target, primary)
    )
}

/// The declared standbys: one that exists already must be a standby of the primary the run
/// file names, as synchronous as declared, and not promoted; one still to be made needs a
/// primary the run declares first or the home has.
pub fn check_declared(declared: &[InstancePlan], home: &Home) -> Result<(), RunError> {
    for d in declared {
        let Some(primary) = &d.standby_of else {
            continue;
        };
        let refuse = |message: String| RunError::Standby {
            name: d.name.clone(),
            message,
        };
        let fresh = format!(
            "destroy it (`tidebench instance destroy {}`) so the run makes it again, or change \
             standby_of",
            d.name
        );
        match instance::find(home, &d.name) {
            Ok(i) => match (i.standby_of(), i.in_recovery()) {
                (Some(p), true) if p == primary => {
                    let sync = i.synchronous_standby();
                    if sync != d.sync {
                        return Err(refuse(format!(
                            "it exists as a {} standby of '{p}', and the run file says sync = \
                             {}; make them agree, or {fresh}",
                            if sync { "synchronous" } else { "asynchronous" },
                            d.sync
                        )));
                    }
                }
                (Some(p), true) => {
                    return Err(refuse(format!(
                        "it exists as a standby of '{p}', not of '{primary}'; {fresh}"
                    )))
                }
                (Some(p), false) => {
                    return Err(refuse(format!(
                        "it was a standby of '{p}' and was promoted since; {fresh}"
                    )))
                }
                (None, _) => {
                    return Err(refuse(format!("it exists and is not a standby; {fresh}")))
                }
            },
            Err(InstanceError::NotFound { .. }) => {
                let declared = declared.iter().any(|o| o.name == *primary);
                match instance::find(home, primary) {
                    Ok(_) => {}
                    Err(InstanceError::NotFound { .. }) if declared => {}
                    Err(InstanceError::NotFound { .. }) => {
                        return Err(refuse(format!(
                            "its primary '{primary}' is neither declared in the run file nor \
                             a managed instance of this home; declare it in an [[instance]] \
                             table before '{}', or create it with `tidebench instance start \
                             {primary}`",
                            d.name
                        )))
                    }
                    Err(e) => return Err(refuse(e.to_string())),
                }
            }
            Err(e) => return Err(refuse(e.to_string())),
        }
    }
    Ok(())
}
