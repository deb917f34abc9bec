//! The knee section from a file built in code: four memory sizes, one without a complete run,
//! the knee marked; and a flat curve without one.

use super::super::html;
use super::super::tests::{file, point, run};
use crate::results::experiment::{
    ExperimentFile, ExperimentKind, KneeAnalysis, KneeMode, KneePoint, KneeRequest,
    KNEE_MEMORY_KEY, KNEE_SHARED_BUFFERS_KEY,
};

fn knee_file(knee_mib: Option<f64>) -> ExperimentFile {
    let points = [
        (1280, Some(300.0)),
        (1536, Some(980.0)),
        (2048, None),
        (2560, Some(1000.0)),
    ]
    .iter()
    .map(|(m, tps)| {
        point(
            &[
                (KNEE_MEMORY_KEY, &format!("{m}MB")),
                (KNEE_SHARED_BUFFERS_KEY, "1GB"),
            ],
            vec![run(&format!("m{m}-r1"), 1, *tps)],
        )
    })
    .collect();
    let mut f = file(ExperimentKind::Knee, &[KNEE_MEMORY_KEY], points);
    f.request.knee = Some(KneeRequest {
        mode: KneeMode::KeepSharedBuffers,
        kept: "1GB".into(),
    });
    let p = |x_mib: f64, value: f64| KneePoint {
        x_mib,
        value,
        normalized: value / 1000.0,
    };
    f.analysis.knee = Some(KneeAnalysis {
        mode: KneeMode::KeepSharedBuffers,
        kept: "1GB".into(),
        x: KNEE_MEMORY_KEY.into(),
        metric: "tps".into(),
        curve: vec![p(1280.0, 300.0), p(1536.0, 980.0), p(2560.0, 1000.0)],
        best: Some(p(2560.0, 1000.0)),
        knee_mib,
        no_knee: knee_mib.is_none().then(|| "the curve is <flat>".into()),
        method: vec!["Kneedle: max y_n − x_n".into()],
        summary: "VM memory working set ≈ 1536 MiB (shared_buffers kept at 1GB).".into(),
    });
    f
}

#[test]
fn the_knee_page_draws_the_normalized_curve_and_marks_the_knee() {
    let page = html(&knee_file(Some(1536.0)));
    assert_eq!(page.matches("<svg").count(), 1, "{page}");
    assert!(page.contains("<h2>Working set</h2>"));
    assert!(page.contains("<strong>VM memory working set ≈ 1536 MiB"));
    assert!(
        page.contains("Normalized tps vs VM memory (MiB) (shared_buffers kept at 1GB)"),
        "{page}"
    );
    assert!(page.contains("knee: 1536 MiB"), "the legend names the knee");
    assert!(
        page.contains("<td>1536MB</td><td>1GB</td><td>980.0</td><td>0.980</td><td>knee</td>"),
        "{page}"
    );
    assert!(page.contains("<td>2560MB</td><td>1GB</td><td>1000.0</td><td>1.000</td><td>best</td>"));
    assert!(page.contains("<td>2048MB</td><td>1GB</td><td>no complete run</td>"));
    assert!(
        page.contains("No complete run at instance.memory = 2048"),
        "{page}"
    );
    assert!(page.contains("<li>Kneedle: max y_n − x_n</li>"));
    // The runs table shows the shared_buffers each point ran with beside the varied memory.
    assert!(
        page.contains(
            "<th>instance.memory</th><th>instance.set.shared_buffers</th><th>repeat</th>"
        ),
        "{page}"
    );
    assert!(!page.contains("NaN"));
}

#[test]
fn a_curve_without_a_knee_says_why() {
    let page = html(&knee_file(None));
    assert!(
        page.contains("<p class=\"flag\">No knee: the curve is &lt;flat&gt;</p>"),
        "{page}"
    );
    assert!(!page.contains("knee: 1536 MiB"), "no knee line: {page}");
}

#[test]
fn a_file_without_the_analysis_yet_has_a_note() {
    let mut f = knee_file(None);
    f.analysis.knee = None;
    let page = html(&f);
    assert!(page.contains("No knee analysis in the file yet"), "{page}");
}
