// PCIe transfer time, eq. 4.6 of 000 per direction (section 5.3):
//   T_c = t_s + n / (bw * lambda_c)
// with startupHTD / lambdaHTD for ConstVar.HostToDevice and startupDth / lambdaDth for
// ConstVar.DeviceToHost (attributes of Fig. 5.2; bandwidth in bytes per second).
// A 0-byte message without a direction is Listing 5's "artificial synchronisation point":
// it is not a cudaMemcpy, so it costs 0 s. Any other message must say its direction.
function p2pTime(size, params) {
  var direction = params.get('direction');
  if (size === 0 && !direction) {
    return 0;
  }
  if (direction === 'HostToDevice') {
    return startupHTD + size / (bandwidth * lambdaHTD);
  }
  if (direction === 'DeviceToHost') {
    return startupDth + size / (bandwidth * lambdaDth);
  }
  throw new Error('a transfer of ' + size + ' bytes needs params.direction ' +
                  'HostToDevice or DeviceToHost, got ' + direction);
}
