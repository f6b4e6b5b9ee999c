//! A heat problem held by the CPU backend: its map, tables and energy ledger.

use super::ProblemUpload;
use crate::error::Result;
use crate::grid::{Grid, GridSize};
use crate::problem::energy::stored_energy_by_row;
use crate::problem::{step, EnergyExchange, EnergyLedger, StepTables};

/// The problem the CPU steps, and what it has booked.
#[derive(Debug, Clone)]
pub struct CpuProblem {
    tables: StepTables,
    map: Vec<u8>,
    ledger: Option<EnergyLedger>,
    exchange: EnergyExchange,
}

impl CpuProblem {
    /// Takes a checked copy of `upload` for a field of `size`.
    pub fn new(upload: &ProblemUpload<'_>, size: GridSize) -> Result<Self> {
        upload.check(size.cells())?;
        let tables = upload.tables.clone();
        let map = upload.map.to_vec();
        let cols = size.cols;
        let ledger = upload.book_energy.then(|| upload.ledger(cols));
        Ok(Self {
            tables,
            map,
            ledger,
            exchange: EnergyExchange::default(),
        })
    }

    /// Steps with `tables` from now on (same kinds, held alike), keeping the map and the
    /// booking.
    pub fn retable(&mut self, tables: &StepTables) -> Result<()> {
        ProblemUpload::check_retable(&self.tables, tables)?;
        self.tables = tables.clone();
        if let Some(ledger) = self.ledger.as_mut() {
            ledger.retable(&self.tables);
        }
        Ok(())
    }

    /// The exchange booked since the last call.
    pub fn take_exchange(&mut self) -> EnergyExchange {
        std::mem::take(&mut self.exchange)
    }

    /// The energy stored in each row of `field`'s free cells.
    pub fn stored_energy_by_row(&self, field: &Grid) -> Vec<f64> {
        stored_energy_by_row(&self.tables, &self.map, field.as_slice(), field.cols())
    }

    /// `steps` steps of `field`, `scratch` as the second buffer (on the caller's rayon pool).
    pub fn advance(&mut self, field: &mut Grid, scratch: &mut Vec<f32>, steps: u64) -> Result<()> {
        ProblemUpload {
            tables: &self.tables,
            map: &self.map,
            book_energy: false,
            booked_rows: None,
        }
        .check(field.size().cells())?;
        let cols = field.cols();
        scratch.resize(field.size().cells(), 0.0);
        for _ in 0..steps {
            if let Some(ledger) = &self.ledger {
                let step = ledger.step_exchange(&self.tables, &self.map, field.as_slice(), cols);
                self.exchange.add(&step);
            }
            step::step_field(&self.tables, &self.map, field.as_slice(), scratch, cols);
            field.swap_values(scratch);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
