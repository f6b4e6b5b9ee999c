//! Sharing the held field with other CUDA libraries in the same process (CuPy, PyTorch, Numba):
//! the current buffer's address for a zero-copy view ([`CudaBackend::field_view`]), a field
//! copied in from another library's device array without a trip through the host
//! ([`CudaBackend::overwrite_from_device`]), and a wait for every stream of the context before
//! heatlab writes a buffer others may still be reading ([`CudaBackend::synchronize_context`]).
//!
//! Every address handed in is checked with the driver before it is read: it must be device
//! memory of heatlab's GPU, and the whole field must lie inside its allocation.

use cudarc::driver::{sys, DevicePtr};

use super::{driver_error, CudaBackend};
use crate::error::{HeatlabError, Result};
use crate::grid::{Grid, GridSize};

/// The held field as other libraries address it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceFieldView {
    /// The device address of the first value (row-major `f32`, C-contiguous).
    pub pointer: u64,
    /// The field's size.
    pub size: GridSize,
    /// The GPU it lives on (CUDA's device ordinal).
    pub device_ordinal: usize,
}

/// A device array of another library, to copy a field from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ForeignDeviceArray {
    /// The device address of its first value (row-major `f32`, C-contiguous).
    pub pointer: u64,
    /// Its size, which must be the held field's.
    pub size: GridSize,
    /// The stream its producer last wrote it on, waited for before the copy (`None`: it is
    /// ready; 1 and 2 name the legacy and per-thread default streams, as in the CUDA Array
    /// Interface).
    pub stream: Option<u64>,
}

/// Where a device address points, as the driver says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PointerPlace {
    /// The GPU whose memory it is.
    pub device_ordinal: usize,
    /// Bytes of its allocation from the address on.
    pub bytes_from_pointer: u64,
}

/// Reads one pointer attribute of `pointer` into a value of type `T`.
///
/// # Safety
/// `T` must be the type the driver writes for `attribute` (its size and layout).
unsafe fn pointer_attribute<T: Default>(
    pointer: u64,
    attribute: sys::CUpointer_attribute,
) -> std::result::Result<T, sys::CUresult> {
    let mut value = T::default();
    // SAFETY: `value` is a live `T`, the type the caller promises the driver writes.
    let result = unsafe {
        sys::cuPointerGetAttribute(
            std::ptr::from_mut(&mut value).cast::<std::ffi::c_void>(),
            attribute,
            pointer,
        )
    };
    match result {
        sys::CUresult::CUDA_SUCCESS => Ok(value),
        error => Err(error),
    }
}

impl CudaBackend {
    /// The current field's buffer, once every step queued on it has finished: a consumer on
    /// any stream then reads the field as it stands. The address stays valid until the field
    /// is replaced by one of another size or the backend is dropped; a step writes the other
    /// buffer and makes it the current one.
    pub fn field_view(&mut self) -> Result<DeviceFieldView> {
        self.settle()?;
        let stream = self.device.stream().clone();
        let device_ordinal = self.device.context().ordinal();
        let buffers = self.buffers()?;
        let size = buffers.size;
        // heatlab's context tracks no events (one stream), so the guard records nothing.
        let pointer = buffers.current.device_ptr(&stream).0;
        stream
            .synchronize()
            .map_err(driver_error("finishing the steps before sharing the field"))?;
        Ok(DeviceFieldView {
            pointer,
            size,
            device_ordinal,
        })
    }

    /// Waits for all work on every stream of heatlab's context, other libraries' included
    /// (they share the GPU's primary context): a kernel of theirs still reading a shared
    /// buffer finishes before heatlab writes it.
    pub fn synchronize_context(&self) -> Result<()> {
        self.device
            .context()
            .synchronize()
            .map_err(driver_error("waiting for the GPU's other work"))
    }

    /// Where `pointer` points: which GPU's memory and how much of its allocation follows.
    /// An address that is not device memory (a host pointer, freed or never allocated) is
    /// refused with the reason.
    pub fn pointer_place(&self, pointer: u64) -> Result<PointerPlace> {
        let refuse = |why: String| HeatlabError::InvalidInput(why);
        self.device
            .context()
            .bind_to_thread()
            .map_err(driver_error("binding heatlab's CUDA context"))?;
        // SAFETY: MEMORY_TYPE is written as a 32-bit CUmemorytype.
        let memory_type = unsafe {
            pointer_attribute::<u32>(
                pointer,
                sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
            )
        }
        .map_err(|error| {
            refuse(format!(
                "address {pointer:#x} is not CUDA memory this process can read ({error:?})"
            ))
        })?;
        let device = sys::CUmemorytype::CU_MEMORYTYPE_DEVICE as u32;
        let unified = sys::CUmemorytype::CU_MEMORYTYPE_UNIFIED as u32;
        if memory_type != device && memory_type != unified {
            return Err(refuse(format!(
                "address {pointer:#x} is host memory, not a GPU array"
            )));
        }
        // SAFETY: DEVICE_ORDINAL is written as a 32-bit int.
        let ordinal = unsafe {
            pointer_attribute::<i32>(
                pointer,
                sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
            )
        }
        .map_err(|error| {
            refuse(format!(
                "the GPU of address {pointer:#x} is unknown ({error:?})"
            ))
        })?;
        // SAFETY: RANGE_START_ADDR is written as a CUdeviceptr.
        let start = unsafe {
            pointer_attribute::<u64>(
                pointer,
                sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
            )
        }
        .map_err(|error| {
            refuse(format!(
                "the allocation of address {pointer:#x} is unknown ({error:?})"
            ))
        })?;
        // SAFETY: RANGE_SIZE is written as a size_t.
        let length = unsafe {
            pointer_attribute::<usize>(
                pointer,
                sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_RANGE_SIZE,
            )
        }
        .map_err(|error| {
            refuse(format!(
                "the allocation of address {pointer:#x} is unknown ({error:?})"
            ))
        })?;
        let end = start.saturating_add(length as u64);
        Ok(PointerPlace {
            device_ordinal: usize::try_from(ordinal).unwrap_or(usize::MAX),
            bytes_from_pointer: end.saturating_sub(pointer),
        })
    }

    /// Replaces the current field with `source`'s values, copied on the GPU into the field's
    /// second buffer (no allocation: views of both buffers stay valid), after the stream
    /// `source` was written on has finished. Refused when `source` is another size, not on
    /// heatlab's GPU, shorter than a field or not finite everywhere.
    pub fn overwrite_from_device(&mut self, source: &ForeignDeviceArray) -> Result<()> {
        self.settle()?;
        let size = self.buffers()?.size;
        if source.size != size {
            return Err(HeatlabError::InvalidInput(format!(
                "the array is {}; this simulation's field is {size}",
                source.size
            )));
        }
        let place = self.pointer_place(source.pointer)?;
        let ours = self.device.context().ordinal();
        if place.device_ordinal != ours {
            return Err(HeatlabError::InvalidInput(format!(
                "the array is on GPU {}; this simulation runs on GPU {ours} (copy it there \
                 first, e.g. with cupy.cuda.Device({ours}) or tensor.to('cuda:{ours}'))",
                place.device_ordinal
            )));
        }
        let bytes = size.bytes();
        if place.bytes_from_pointer < bytes as u64 {
            return Err(HeatlabError::InvalidInput(format!(
                "the array's memory holds {} bytes from its first value; a {size} field needs \
                 {bytes}",
                place.bytes_from_pointer
            )));
        }
        if let Some(producer) = source.stream {
            // SAFETY: the handle comes from the array's producer in this process (or names a
            // default stream); waiting on it reads nothing.
            let waited = unsafe { sys::cuStreamSynchronize(producer as sys::CUstream) };
            if waited != sys::CUresult::CUDA_SUCCESS {
                return Err(HeatlabError::InvalidInput(format!(
                    "cannot wait for the array's stream {producer:#x} ({waited:?})"
                )));
            }
        }
        // Into the second buffer, which holds nothing between steps; it becomes the current
        // one only when every value is finite, so a refused array leaves the field as it was.
        self.lookahead = None;
        let stream = self.device.stream().clone();
        let buffers = self.buffers()?;
        // heatlab's context tracks no events (one stream), so the guard records nothing.
        let destination = buffers.next.device_ptr(&stream).0;
        // SAFETY: both ranges were checked above to hold `bytes` bytes of device memory on this
        // GPU; the copy is ordered on heatlab's stream, which is waited for before returning.
        let copied = unsafe {
            sys::cuMemcpyDtoDAsync_v2(destination, source.pointer, bytes, stream.cu_stream())
        };
        if copied != sys::CUresult::CUDA_SUCCESS {
            return Err(HeatlabError::Cuda {
                context: "copying the array into the field".into(),
                message: format!("{copied:?}"),
            });
        }
        buffers.flip();
        let stats = crate::compute::Backend::statistics(self)?;
        if stats.total.is_finite() {
            return Ok(());
        }
        self.buffers()?.flip();
        Err(HeatlabError::InvalidInput(
            "the device array holds NaN or infinite values; replace them first \
             (cupy.nan_to_num, torch.nan_to_num)"
                .into(),
        ))
    }

    /// A host copy of the buffer `view` points at (a view handed out earlier: after steps it
    /// may be the field's other buffer), once every stream of the context has finished (a
    /// consumer may have written it).
    pub fn download_view(&mut self, view: &DeviceFieldView) -> Result<Grid> {
        self.settle()?;
        let size = self.buffers()?.size;
        if view.size != size {
            return Err(HeatlabError::InvalidInput(format!(
                "the view is of a {} field; the simulation now holds {size}",
                view.size
            )));
        }
        self.synchronize_context()?;
        let mut values: Vec<f32> =
            crate::memory::try_vec_with_capacity(&format!("{size} field"), size.cells())?;
        values.resize(size.cells(), 0.0);
        // SAFETY: `view` points at one of the field's buffers, which this backend still holds
        // (the size is unchanged, so they were not replaced), of `size.bytes()` bytes; the
        // copy is synchronous and writes the vector just sized to hold them.
        let copied = unsafe {
            sys::cuMemcpyDtoH_v2(
                values.as_mut_ptr().cast::<std::ffi::c_void>(),
                view.pointer,
                size.bytes(),
            )
        };
        if copied != sys::CUresult::CUDA_SUCCESS {
            return Err(HeatlabError::Cuda {
                context: "copying the field to the host".into(),
                message: format!("{copied:?}"),
            });
        }
        Grid::from_vec(size, values)
    }

    /// Replaces the current field with `field`, of the size it has, in the buffer it has.
    pub(super) fn overwrite_on_device(&mut self, field: &Grid) -> Result<()> {
        self.lookahead = None;
        self.last_params = None;
        let stream = self.device.stream().clone();
        let buffers = self.buffers()?;
        if buffers.size != field.size() {
            return Err(HeatlabError::Internal(format!(
                "overwriting a {} field with a {} one",
                buffers.size,
                field.size()
            )));
        }
        stream
            .memcpy_htod(field.as_slice(), &mut buffers.current)
            .map_err(driver_error("uploading the field"))?;
        // The host values the copy reads are the caller's: wait before handing them back.
        stream
            .synchronize()
            .map_err(driver_error("uploading the field"))
    }
}
