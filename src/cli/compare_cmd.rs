//! `tidebench compare`: results dirs side by side (text, and HTML with `--html`), or
//! experiment dirs point by point.

use super::{args, CliError};

pub fn compare(args: args::CompareArgs) -> Result<u8, CliError> {
    let experiments = args
        .dirs
        .iter()
        .filter(|d| crate::results::experiment::is_experiment(d))
        .count();
    if experiments > 0 {
        if experiments < args.dirs.len() || args.html.is_some() {
            return Err(CliError::usage(
                "compare takes either results dirs or experiment dirs (point by point, text only), not both",
            ));
        }
        let table = crate::report::compare_experiment::compare_table(&args.dirs)
            .map_err(CliError::usage)?;
        print!("{table}");
        return Ok(0);
    }
    let sides = crate::report::compare::sides(&args.dirs).map_err(CliError::usage)?;
    print!("{}", crate::report::compare::table(&sides));
    print!("{}", crate::report::compare_profile::table(&args.dirs));
    print!("{}", crate::report::compare_waits::table(&args.dirs));
    print!("{}", crate::report::compare_units::table(&args.dirs));
    if let Some(out) = &args.html {
        let page = crate::report::compare::html(&sides).replace(
            "</body>",
            &format!(
                "{}</body>",
                crate::report::compare_profile::html(&args.dirs)
            ),
        );
        crate::results::atomic::write(out, page.as_bytes())
            .map_err(|e| CliError::usage(e.to_string()))?;
        println!("{}", out.display());
    }
    Ok(0)
}
