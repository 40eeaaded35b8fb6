//! traceback
