pub enum ModError { UnknownOpcode, Other(String) }
impl std::fmt::Display for ModError { fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result { match self { ModError::UnknownOpcode => write!(f, "unknown"), ModError::Other(s) => write!(f, "{s}") } } }
pub struct InstrSpec;
pub fn check(_o: &str, _m: &[&str], _n: usize) -> Result<&'static InstrSpec, ModError> { Ok(&InstrSpec) }
