//! What every benchmark reports beside its figures, as MOTION2NX reports its runs (seed 003,
//! §6: the mean, median and standard deviation of repeated runs, with the host and the command
//! line): [`SampleStats`] over a figure's samples, and [`emit`], which prints one JSON line with the
//! host's CPU model, core count and the command line that produced it.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Statistics of one figure's timed samples.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SampleStats {
    /// The arithmetic mean.
    pub mean: f64,
    /// The median (the upper one of an even count), the figure the tables report.
    pub median: f64,
    /// The sample standard deviation (n − 1 in the denominator; 0 for one sample).
    pub stddev: f64,
    /// How many samples.
    pub samples: usize,
}

impl SampleStats {
    /// The statistics of `values`; all zero for none.
    pub fn of(values: impl IntoIterator<Item = f64>) -> SampleStats {
        let mut v: Vec<f64> = values.into_iter().collect();
        if v.is_empty() {
            return SampleStats {
                mean: 0.0,
                median: 0.0,
                stddev: 0.0,
                samples: 0,
            };
        }
        v.sort_by(f64::total_cmp);
        let n = v.len() as f64;
        let mean = v.iter().sum::<f64>() / n;
        let squares: f64 = v.iter().map(|x| (x - mean) * (x - mean)).sum();
        let stddev = if v.len() > 1 {
            (squares / (n - 1.0)).sqrt()
        } else {
            0.0
        };
        SampleStats {
            mean,
            median: v[v.len() / 2],
            stddev,
            samples: v.len(),
        }
    }
}

/// The median of `v` (the upper one of an even count).
pub fn median(v: Vec<f64>) -> f64 {
    SampleStats::of(v).median
}

/// The host a report was measured on and how: the CPU model, the cores this process may use
/// and the command line.
pub fn host() -> Value {
    json!({
        "cpu": super::cpu_model(),
        "cores": std::thread::available_parallelism().map_or(1, usize::from),
        "command_line": std::env::args().collect::<Vec<_>>(),
    })
}

/// `report` with the [`host`] beside its figures.
pub fn with_host(mut report: Value) -> Value {
    if let Some(fields) = report.as_object_mut() {
        fields.insert("host".into(), host());
    }
    report
}

/// Prints `report` as one JSON line with the [`host`] beside its figures.
pub fn emit(report: Value) {
    println!("{}", with_host(report));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_of_known_samples() {
        let s = SampleStats::of([2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert_eq!(s.samples, 8);
        assert_eq!(s.mean, 5.0);
        assert_eq!(s.median, 5.0);
        // Sum of squares 32 over n − 1 = 7.
        assert!((s.stddev - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        let one = SampleStats::of([3.0]);
        assert_eq!(
            (one.mean, one.median, one.stddev, one.samples),
            (3.0, 3.0, 0.0, 1)
        );
        assert_eq!(SampleStats::of([]).samples, 0);
    }
}
