//! A program's flatbuffer as a whole: its methods, read without loading anything.

use crate::error::Error;
use crate::fields as fb;
use crate::header::{self, ProgramError, Verification};
use crate::meta::MethodMeta;
use crate::reader::{Table, Vector};

mod delegates;

pub use delegates::{DelegateEntry, PayloadLocation};

/// The root `Program` table of a `.pte`: methods, their metadata, and where delegate
/// payloads and segments lie. Loading constants and segments is the runtime's business
/// (et-runtime's `Program`, which holds a view like this one).
#[derive(Clone, Copy)]
pub struct ProgramView<'d> {
    root: Table<'d>,
}

impl core::fmt::Debug for ProgramView<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ProgramView")
            .field("methods", &self.num_methods())
            .finish()
    }
}

impl<'d> ProgramView<'d> {
    /// A whole `.pte` file in memory: the identifier, the extended header, and the checks
    /// `verification` asks for ([`header::locate`], [`header::root`]).
    pub fn parse(file: &'d [u8], verification: Verification) -> Result<Self, ProgramError> {
        let (_, program_size) = header::locate(file, file.len())?;
        let data = file.get(..program_size).ok_or(ProgramError::new(
            Error::InvalidProgram,
            "file is truncated",
        ))?;
        header::root(data, verification).map(ProgramView::new)
    }

    /// The view of a root table found by [`header::root`].
    pub fn new(root: Table<'d>) -> Self {
        ProgramView { root }
    }

    /// The root `Program` table.
    pub fn root(&self) -> Table<'d> {
        self.root
    }

    /// `Program.version` from the file.
    pub fn version(&self) -> u32 {
        self.root.uint(fb::Program::VT_VERSION, 4) as u32
    }

    fn plans(&self) -> Option<Vector<'d>> {
        self.root.vector(fb::Program::VT_EXECUTION_PLAN)
    }

    /// Number of methods.
    pub fn num_methods(&self) -> usize {
        self.plans().map_or(0, |p| p.len())
    }

    /// The name of method `index`.
    pub fn method_name(&self, index: usize) -> Result<&'d str, Error> {
        let plans = self.plans().ok_or(Error::InvalidProgram)?;
        let plan = plans.table(index).ok_or(Error::InvalidArgument)?;
        plan_name(plan).ok_or(Error::InvalidProgram)
    }

    /// The method names, in file order.
    pub fn method_names(self) -> impl Iterator<Item = &'d str> {
        (0..self.num_methods()).filter_map(move |i| self.method_name(i).ok())
    }

    /// Metadata of method `name`: inputs, outputs, planned memory, operators.
    pub fn method_meta(&self, name: &str) -> Result<MethodMeta<'d>, Error> {
        let plans = self.plans().ok_or(Error::InvalidProgram)?;
        for i in 0..plans.len() {
            let Some(plan) = plans.table(i) else { break };
            if let Some(found) = plan_name(plan).filter(|n| *n == name) {
                return MethodMeta::new(plan, found);
            }
        }
        Err(Error::InvalidArgument)
    }
}

/// An `ExecutionPlan`'s name.
fn plan_name(plan: Table<'_>) -> Option<&str> {
    plan.string(fb::ExecutionPlan::VT_NAME)
}
