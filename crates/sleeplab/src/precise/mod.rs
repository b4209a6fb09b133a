//! Precise sleeping: [`PreciseSleeper`], the `Ticker` and contender strategies (in progress).
