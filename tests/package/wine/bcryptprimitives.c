/* A stand-in for Windows 10's bcryptprimitives.dll, for Debian's Wine 8.0
   only (tests/package/check.sh): Go's runtime loads ProcessPrng from it at
   start and Wine 8.0 does not ship the DLL. It fills the buffer from
   RtlGenRandom (advapi32's SystemFunction036), which Wine has. Never shipped. */
#include <windows.h>
#include <ntsecapi.h>

BOOL WINAPI ProcessPrng(PBYTE buf, SIZE_T len) {
  while (len > 0) {
    ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
    if (!RtlGenRandom(buf, n)) return FALSE;
    buf += n;
    len -= n;
  }
  return TRUE;
}
